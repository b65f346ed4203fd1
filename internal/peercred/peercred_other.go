//go:build !linux && !darwin && !freebsd

package peercred

func peerUID(int) (int, error) { return -1, ErrUnsupported }

func peerCreds(int) (Creds, error) { return Creds{}, ErrUnsupported }
