package cli

import (
	"github.com/txray/txray/check"
	_ "github.com/txray/txray/check/emme" // "emme": version certificates, predicate dependencies
	_ "github.com/txray/txray/check/enne" // "enne": expected serialization order replay
	"github.com/txray/txray/history"
)

// emmeApplies reports whether the emme checker can judge h under mdl (a
// version order is present): txray run then checks predicate reads with it
// rather than dropping them.
func emmeApplies(h *history.History, mdl string) bool {
	c, ok := check.Lookup("emme")
	if !ok {
		return false
	}
	r, _ := c.Applies(h, mdl)
	return r > 0
}
