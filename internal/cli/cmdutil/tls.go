package cmdutil

import (
	"github.com/spf13/pflag"

	"github.com/sched-dev/sched/client"
	"github.com/sched-dev/sched/internal/cli/config"
)

// addTLSFlags registers the global flags of a tls: or https:// address:
// the CA that signs the daemon's certificate and, for a daemon that
// requires one, the client certificate and key.
func (f *Factory) addTLSFlags(pf *pflag.FlagSet) {
	pf.StringVar(&f.tls.CA, "tls-ca", "", "PEM `FILE` of the CA(s) that sign schedd's certificate, for a tls: or https:// --addr (env SCHED_TLS_CA; default: the system's roots)")
	pf.StringVar(&f.tls.ClientCert, "tls-client-cert", "", "PEM `FILE` of the client certificate, for a schedd that requires one (--tls-client-ca) (env SCHED_TLS_CLIENT_CERT)")
	pf.StringVar(&f.tls.ClientKey, "tls-client-key", "", "PEM `FILE` of the client certificate's key (env SCHED_TLS_CLIENT_KEY)")
}

// tlsFiles are the TLS flags, each falling back to its variable, then to
// the context cx's file (when cx is not nil; the client certificate and
// key as a pair, only when neither is given otherwise); a client
// certificate without its key (or the reverse) is invalid input.
func (f *Factory) tlsFiles(cx *config.Context) (client.TLSFiles, error) {
	files := f.tls
	for _, v := range []struct {
		p   *string
		env string
	}{{&files.CA, "SCHED_TLS_CA"}, {&files.ClientCert, "SCHED_TLS_CLIENT_CERT"}, {&files.ClientKey, "SCHED_TLS_CLIENT_KEY"}} {
		if *v.p == "" {
			*v.p, _ = f.LookupEnv(v.env)
		}
	}
	if cx != nil {
		if files.CA == "" {
			files.CA = cx.TLSCA
		}
		if files.ClientCert == "" && files.ClientKey == "" {
			files.ClientCert, files.ClientKey = cx.TLSClientCert, cx.TLSClientKey
		}
	}
	switch {
	case files.ClientCert != "" && files.ClientKey == "":
		return files, UsageErrorf("--tls-client-cert is given without --tls-client-key (or SCHED_TLS_CLIENT_KEY)")
	case files.ClientKey != "" && files.ClientCert == "":
		return files, UsageErrorf("--tls-client-key is given without --tls-client-cert (or SCHED_TLS_CLIENT_CERT)")
	}
	return files, nil
}
