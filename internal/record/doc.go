// Package record is the signed acceptance record of `gpuctl accept`: the
// predicate's schema (every value type it embeds), reading a record file
// (a DSSE envelope or an unsigned in-toto Statement) with its guards, and
// verifying one (signature, payload, subject, evidence). It imports no
// gpuctl package but diag and links no Kubernetes client: accept builds and
// signs records, report and verify read them. The JSON of every type here
// is a contract; its names do not change.
package record
