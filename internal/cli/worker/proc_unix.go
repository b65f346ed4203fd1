//go:build unix

package worker

import (
	"os"
	"os/exec"
	"syscall"
)

// setProcessGroup starts cmd in a process group of its own.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// signalGroup signals the process group p leads.
func signalGroup(p *os.Process, sig syscall.Signal) {
	if p != nil {
		_ = syscall.Kill(-p.Pid, sig)
	}
}
