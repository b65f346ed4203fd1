//go:build !unix

package worker

import (
	"os"
	"os/exec"
	"syscall"
)

func setProcessGroup(*exec.Cmd) {}

// signalGroup can only kill the process itself here.
func signalGroup(p *os.Process, _ syscall.Signal) {
	if p != nil {
		_ = p.Kill()
	}
}
