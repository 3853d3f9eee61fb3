package cli

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/txray/txray/internal/hugemem"
)

// adviseHugePages reserves a heap region backed by transparent huge pages
// (internal/hugemem) for the commands that hold large histories in memory,
// sized from their input: check (the files named; stdin counts as unknown)
// and watch (its --memory-limit bounds the heap). Other commands keep the
// kernel's default paging. TXRAY_HUGEPAGES=0 turns it off.
//
// hugeAdvised is what the last call advised (bytes; 0: nothing).
func adviseHugePages(c *cobra.Command, args []string) {
	hugeAdvised = 0
	switch c.Name() {
	case "check":
		var total int64
		for _, a := range args {
			st, err := os.Stat(a)
			if a == "-" || err != nil || !st.Mode().IsRegular() {
				total = -1
				break
			}
			total += st.Size()
		}
		hugeAdvised = hugemem.Reserve(hugemem.ForInput(total))
	case "watch":
		n := hugemem.ForInput(-1)
		if v, err := c.Flags().GetInt64("memory-limit"); err == nil && v > 0 {
			// the heap stays near the limit: the limit and a margin
			n = min(n, uintptr(v+256)<<20)
		}
		hugeAdvised = hugemem.Reserve(n)
	}
}

var hugeAdvised uintptr
