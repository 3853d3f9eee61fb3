package cli

// Every codec and checker registers itself from init; the CLI links them all.
import (
	_ "github.com/txray/txray/check/chronos"
	_ "github.com/txray/txray/check/elle"
	_ "github.com/txray/txray/check/leopard"
	_ "github.com/txray/txray/check/polygraph"
	_ "github.com/txray/txray/check/weak"
	_ "github.com/txray/txray/history/edn"
	_ "github.com/txray/txray/history/ellejson"
	_ "github.com/txray/txray/history/jsonl"
	_ "github.com/txray/txray/history/leopard"
	_ "github.com/txray/txray/history/polysi"
	_ "github.com/txray/txray/history/timekiller"
)
