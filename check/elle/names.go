package elle

import "github.com/txray/txray/model"

// Anomaly names this package reports besides dependency cycles, in the
// shared vocabulary (design.md §5, package model; Elle's names). Cycle
// anomaly names (G0, G1c, G-single-item, ...) come from package graph's
// classification.
const (
	aG1a               = model.G1a
	aG1b               = model.G1b
	aInternal          = model.Internal
	aFutureRead        = model.FutureRead
	aIncompatibleOrder = model.IncompatibleOrder
	aDuplicateElements = model.DuplicateElements
	aDirtyUpdate       = model.DirtyUpdate
	aLostUpdate        = model.LostUpdate
)
