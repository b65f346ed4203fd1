package config

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"time"
)

// TokenCommandTimeout bounds a token_command: long enough for a person to
// unlock a keyring, short enough that a script does not hang for ever.
const TokenCommandTimeout = time.Minute

// maxToken bounds what is read of a token file or a command's output.
const maxToken = 64 << 10

// Token returns the context's token, read at each use so that a rotated
// token is picked up at once: the trimmed contents of token_file, or the
// trimmed standard output of token_command; "" when it names neither.
//
// A token file that group or others may read is refused, as ssh refuses
// such a private key: the token is an API credential. A command runs
// without a shell and without standard input, bounded by ctx and
// TokenCommandTimeout; a keyring is used through one (secret-tool lookup
// ..., pass show ..., security find-generic-password -w ...).
func (c Context) Token(ctx context.Context) (string, error) {
	switch {
	case c.TokenFile != "":
		return c.fileToken()
	case len(c.TokenCommand) > 0:
		return c.commandToken(ctx)
	}
	return "", nil
}

func (c Context) where() string {
	if c.line > 0 {
		return fmt.Sprintf("context %q (%s:%d)", c.name, c.file, c.line)
	}
	return fmt.Sprintf("context %q", c.name)
}

func (c Context) fileToken() (string, error) {
	p := c.TokenFile
	fh, err := os.Open(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", invalidf("%s: token_file %s does not exist", c.where(), p)
		}
		return "", fmt.Errorf("%s: token_file: %w", c.where(), err)
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return "", fmt.Errorf("%s: token_file: %w", c.where(), err)
	}
	if err := CheckTokenFile(p, fi); err != nil {
		return "", fmt.Errorf("%s: %w", c.where(), err)
	}
	b, err := io.ReadAll(io.LimitReader(fh, maxToken+1))
	if err != nil {
		return "", fmt.Errorf("%s: token_file %s: %w", c.where(), p, err)
	}
	tok, err := oneToken(b)
	if err != nil {
		return "", invalidf("%s: token_file %s %v", c.where(), p, err)
	}
	return tok, nil
}

// CheckTokenFile refuses a token file that is not a regular file or that
// group or others may read or write (mode 0600 or stricter is wanted).
func CheckTokenFile(path string, fi fs.FileInfo) error {
	if !fi.Mode().IsRegular() {
		return invalidf("token_file %s is not a regular file", path)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return invalidf("token_file %s has mode %04o: group or others may read it, and it holds a credential; make it yours alone, as ssh asks of a private key: chmod 600 %s", path, perm, path)
	}
	return nil
}

// oneToken is b trimmed, which must be one word.
func oneToken(b []byte) (string, error) {
	if len(b) > maxToken {
		return "", fmt.Errorf("is over %d KiB; want one token", maxToken>>10)
	}
	tok := strings.TrimSpace(string(b))
	switch {
	case tok == "":
		return "", errors.New("is empty; want the token")
	case strings.ContainsFunc(tok, func(r rune) bool { return r <= ' ' || r == 0x7f }):
		return "", errors.New("holds more than one word (or a control character); want the token alone")
	}
	return tok, nil
}

func (c Context) commandToken(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, TokenCommandTimeout)
	defer cancel()
	argv := c.TokenCommand
	name := argv[0]
	cmd := exec.CommandContext(ctx, name, argv[1:]...)
	var out, errb limitedBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Stdin = nil // the null device: the token must not be read from ours
	err := cmd.Run()
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
		return "", invalidf("%s: token_command %s: %v", c.where(), name, err)
	}
	if err != nil {
		msg := err.Error()
		if ctx.Err() != nil {
			msg = fmt.Sprintf("no token within %s", TokenCommandTimeout)
		}
		if first, _, _ := strings.Cut(strings.TrimSpace(errb.String()), "\n"); first != "" {
			msg += ": " + clip(first, 200)
		}
		return "", fmt.Errorf("%s: token_command %s failed: %s", c.where(), name, msg)
	}
	tok, err := oneToken(out.Bytes())
	if err != nil {
		return "", fmt.Errorf("%s: the output of token_command %s %v", c.where(), name, err)
	}
	return tok, nil
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "..."
	}
	return s
}

// limitedBuffer keeps the first maxToken+1 bytes written to it and
// accepts the rest, so that a chatty command neither blocks nor fills
// memory.
type limitedBuffer struct{ bytes.Buffer }

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := maxToken + 1 - b.Len(); room > 0 {
		b.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
