package bench

// Decoders added with the register read checks (issue 11).
import (
	_ "github.com/txray/txray/history/cobra"
	_ "github.com/txray/txray/history/dbcop"
)
