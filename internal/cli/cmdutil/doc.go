// Package cmdutil is what every schedctl command needs, and nothing about
// any one of them: the Factory (I/O streams and whether they are
// terminals, the clock, the environment, the global -o/--addr/--token/
// --context flags and the client built from them, connection.go), the
// exit statuses and the errors that choose them, JSON and table output,
// paging of long lists, and -w watching.
//
// Commands live in one package per noun under internal/cli (schedule,
// occurrence, worker, dlq, status, cluster, preview, version, completion),
// and every one is built the same way:
//
//	func NewCmdX(f *cmdutil.Factory, runF func(*XOptions) error) *cobra.Command
//
// The command parses and checks its flags and arguments into an XOptions
// (which holds f as IO, a constructor of what it talks to, and the
// context), then calls runF, or its own xRun when runF is nil. Tests pass
// a runF to see the options a command line gives, or call xRun with
// options of their own. A command that only holds subcommands (dlq) is
// NewCmdX(f) and has no options.
package cmdutil
