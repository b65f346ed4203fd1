package client

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

// TLSFiles names the PEM files of a TLS connection to schedd (a tls: or
// https:// address). schedctl fills it from --tls-ca, --tls-client-cert
// and --tls-client-key (SCHED_TLS_CA, SCHED_TLS_CLIENT_CERT,
// SCHED_TLS_CLIENT_KEY).
type TLSFiles struct {
	// CA is a bundle of the CAs that may sign the daemon's certificate;
	// empty: the system's roots.
	CA string
	// ClientCert and ClientKey are this client's certificate and key, for
	// a daemon that requires one (schedd --tls-client-ca). Both or
	// neither.
	ClientCert, ClientKey string
}

// ErrInvalidTLS is wrapped by New's error for TLS files it cannot use.
var ErrInvalidTLS = errors.New("invalid TLS settings")

// WithTLSFiles reads the CA bundle and the client certificate of tls: and
// https:// addresses from files (on top of WithTLSConfig's configuration,
// if given). Other addresses ignore them.
func WithTLSFiles(f TLSFiles) Option { return func(o *options) { o.tlsFiles = f } }

// clientTLS is the configuration of a TLS connection: base (or an empty
// one), at least TLS 1.2, with f's CA as the roots and f's client
// certificate. Errors name the file at fault.
func clientTLS(base *tls.Config, f TLSFiles) (*tls.Config, error) {
	tc := &tls.Config{}
	if base != nil {
		tc = base.Clone()
	}
	if tc.MinVersion < tls.VersionTLS12 {
		tc.MinVersion = tls.VersionTLS12
	}
	if f.CA != "" {
		b, err := os.ReadFile(f.CA)
		if err != nil {
			return nil, fmt.Errorf("%w: the CA bundle: %w", ErrInvalidTLS, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(b) {
			return nil, fmt.Errorf("%w: the CA bundle %s holds no PEM certificate", ErrInvalidTLS, f.CA)
		}
		tc.RootCAs = pool
	}
	switch {
	case f.ClientCert != "" && f.ClientKey == "":
		return nil, fmt.Errorf("%w: a client certificate (%s) without its key", ErrInvalidTLS, f.ClientCert)
	case f.ClientKey != "" && f.ClientCert == "":
		return nil, fmt.Errorf("%w: a client key (%s) without its certificate", ErrInvalidTLS, f.ClientKey)
	case f.ClientCert != "":
		cert, err := tls.LoadX509KeyPair(f.ClientCert, f.ClientKey)
		if err != nil {
			return nil, fmt.Errorf("%w: the client certificate %s and key %s: %w", ErrInvalidTLS, f.ClientCert, f.ClientKey, err)
		}
		tc.Certificates = []tls.Certificate{cert}
		// Sent whatever CAs the daemon names as acceptable (by default Go
		// sends none that it thinks the daemon would refuse), so that the
		// daemon's refusal says the certificate is not trusted, rather
		// than that none came.
		tc.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &cert, nil }
	}
	return tc, nil
}

// handshakeTimeout bounds a TLS handshake, as http.Transport's
// TLSHandshakeTimeout would if it made the handshake.
const handshakeTimeout = 10 * time.Second

// dialTLS connects over TCP and makes the TLS handshake itself, verifying
// the daemon's certificate for the address's host, so that a failed
// verification is one clear *DialError rather than a bare x509 error.
func (c *Client) dialTLS(ctx context.Context, network, address string) (net.Conn, error) {
	raw, err := c.dialTCP(ctx, network, address)
	if err != nil {
		return nil, err
	}
	tc := c.tls.Clone()
	if tc.ServerName == "" {
		tc.ServerName = hostOf(address)
	}
	conn := tls.Client(raw, tc)
	hctx, cancel := context.WithTimeout(ctx, handshakeTimeout)
	defer cancel()
	if err := conn.HandshakeContext(hctx); err != nil {
		raw.Close()
		if ctx.Err() != nil {
			return nil, err
		}
		if de := c.tlsError(err); de != nil {
			return nil, de
		}
		return nil, &DialError{Addr: c.addr, Err: fmt.Errorf("TLS handshake: %w", err)}
	}
	return conn, nil
}

// tlsError explains a TLS failure as a *DialError: a daemon certificate
// that does not verify, a daemon that does not speak TLS, or a daemon
// that refused the handshake (an alert, such as a client certificate
// missing or not trusted, which TLS 1.3 reports only on the first read).
// It returns nil for other errors.
func (c *Client) tlsError(err error) *DialError {
	var (
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
		record   tls.RecordHeaderError
		oe       *net.OpError
	)
	switch {
	case errors.As(err, &unknown):
		if c.tlsFiles.CA != "" {
			return &DialError{Addr: c.addr, Untrusted: true,
				Err:  fmt.Errorf("the daemon's certificate is not signed by the CA in --tls-ca (%s): %w", c.tlsFiles.CA, err),
				hint: "give the CA that signed schedd's --tls-cert"}
		}
		return &DialError{Addr: c.addr, Untrusted: true,
			Err:  fmt.Errorf("the daemon's certificate is not signed by a CA this system trusts: %w", err),
			hint: "give the CA that signed it with --tls-ca FILE or SCHED_TLS_CA"}
	case errors.As(err, &hostname):
		return &DialError{Addr: c.addr, Untrusted: true,
			Err:  fmt.Errorf("the daemon's certificate is not valid for %s: %w", hostname.Host, err),
			hint: "connect by a name or address the certificate lists"}
	case errors.As(err, &invalid):
		return &DialError{Addr: c.addr, Untrusted: true, Err: fmt.Errorf("the daemon's certificate is not valid: %w", err)}
	case errors.As(err, &record):
		return &DialError{Addr: c.addr, Err: fmt.Errorf("what answered does not speak TLS: %w", err),
			hint: "for a schedd without --tls-cert use tcp:HOST:PORT"}
	case errors.As(err, &oe) && oe.Op == "remote error":
		hint := "the daemon may require a client certificate: give --tls-client-cert and --tls-client-key"
		if len(c.tls.Certificates) > 0 {
			hint = "is the client certificate (--tls-client-cert) signed by a CA the daemon trusts (its --tls-client-ca)?"
		}
		return &DialError{Addr: c.addr, Err: fmt.Errorf("the daemon refused the TLS handshake: %w", oe.Err), hint: hint}
	}
	return nil
}

// hostOf is the host part of HOST:PORT, without the brackets of an IPv6
// literal.
func hostOf(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return hostport
}

// plainToTLS explains the answer of a TLS listener to plain HTTP (Go's
// servers answer 400 "Client sent an HTTP request to an HTTPS server"): a
// tcp: address where tls: was needed is a failure to connect, not invalid
// input.
func (c *Client) plainToTLS(err error) error {
	e := asError(err)
	if c.tls == nil && e != nil && e.Code == "" && e.Status == http.StatusBadRequest &&
		strings.Contains(e.Message, "HTTP request to an HTTPS server") {
		return &DialError{Addr: c.addr, Err: errors.New("the daemon serves TLS there"),
			hint: "use tls:" + strings.TrimPrefix(c.addr, "tcp:") + " (with --tls-ca if its CA is private)"}
	}
	return err
}
