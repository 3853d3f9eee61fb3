package elle

// Anomaly names this package reports besides dependency cycles, in the
// shared vocabulary (design.md §5; Elle's names). Cycle anomaly names (G0,
// G1c, G-single-item, ...) come from package graph's classification.
const (
	aG1a               = "G1a"
	aG1b               = "G1b"
	aInternal          = "internal"
	aFutureRead        = "future-read"
	aIncompatibleOrder = "incompatible-order"
	aDuplicateElements = "duplicate-elements"
	aDirtyUpdate       = "dirty-update"
	aLostUpdate        = "lost-update"
	aCyclicVersions    = "cyclic-versions"
)
