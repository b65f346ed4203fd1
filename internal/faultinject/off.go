//go:build !faultinject

package faultinject

// Enabled reports whether this build has crash points.
const Enabled = false

// Crash does nothing in a build without the faultinject tag.
func Crash(point string) {}
