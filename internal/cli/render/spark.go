package render

import (
	"fmt"
	"math"
	"strings"
)

// BusbwCurve is an NCCL run's bus bandwidth by message size, for the
// terminal's sparkline: points ascending by size, and the baseline's
// minimum (0 when none).
type BusbwCurve struct {
	Points  []CurvePoint
	MinGBps float64
}

// CurvePoint is one message size and its bus bandwidth (GB/s).
type CurvePoint struct {
	SizeBytes        int64
	BusBandwidthGBps float64
}

// sparkBars are the eight block heights of a sparkline.
var sparkBars = []rune("▁▂▃▄▅▆▇█")

// Sparkline is the one-line chart of c for a terminal: "busbw by size
// 256 MiB ▆▆██ 2 GiB  419.5–470.7 GB/s (minimum 333)". Each bar is one
// message size, scaled from 0 to the highest busbw (or the minimum, when
// higher). "" without points.
func Sparkline(c *BusbwCurve) string {
	if c == nil || len(c.Points) == 0 {
		return ""
	}
	top, lo, hi := c.MinGBps, math.Inf(1), math.Inf(-1)
	for _, p := range c.Points {
		top = math.Max(top, p.BusBandwidthGBps)
		lo, hi = math.Min(lo, p.BusBandwidthGBps), math.Max(hi, p.BusBandwidthGBps)
	}
	var b strings.Builder
	for _, p := range c.Points {
		i := 0
		if top > 0 {
			i = int(math.Round(p.BusBandwidthGBps / top * float64(len(sparkBars)-1)))
		}
		b.WriteRune(sparkBars[max(0, min(i, len(sparkBars)-1))])
	}
	line := fmt.Sprintf("busbw by size  %s %s %s  %s–%s GB/s", SizeLabel(c.Points[0].SizeBytes), b.String(),
		SizeLabel(c.Points[len(c.Points)-1].SizeBytes), fmt.Sprintf("%.1f", lo), fmt.Sprintf("%.1f", hi))
	if c.MinGBps > 0 {
		line += " (minimum " + gbps(c.MinGBps) + ")"
	}
	return line
}
