package client

import (
	"errors"
	"fmt"
	"os"

	"github.com/sched-dev/sched/internal/paths"
)

// socketOwner is the uid whose daemon the socket must be: this user's, or
// the owner's of a socket shared with a group of this user (schedd
// --socket-group, docs/security.md), which is trusted only at an address
// given (unix:PATH), never at the default socket's path, which another
// user could take first, and only where no one but its owner and root
// could have put it (paths.CheckSharedSocket).
func (c *Client) socketOwner() (int, error) {
	err := paths.CheckSocket(c.socket)
	var ne *paths.NotOwnerError
	if err == nil || c.defaultSocket || !errors.As(err, &ne) {
		return os.Geteuid(), err
	}
	owner, serr := paths.CheckSharedSocket(c.socket)
	if serr != nil {
		return -1, fmt.Errorf("%w (nor is it shared with you by schedd --socket-group: %v)", err, serr)
	}
	return owner, nil
}
