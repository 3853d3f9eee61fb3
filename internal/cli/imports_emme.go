package cli

import (
	_ "github.com/txray/txray/check/emme" // "emme": version certificates, predicate dependencies
	_ "github.com/txray/txray/check/enne" // "enne": expected serialization order replay
)
