// Package extra has no layering rule: the check must say so.
package extra
