//go:build !linux

package history

import (
	"os"
	"unsafe"
)

const canDrop = false

func mmapFile(*os.File, int) ([]byte, func([]byte)) { return nil, nil }

func dropPages(unsafe.Pointer, uintptr) {}
