package console

import "github.com/spf13/pflag"

// Default addresses: the arbiter's console, and report's (so that both run on one host).
const (
	DefaultArbiterListen = "127.0.0.1:9470"
	DefaultReportListen  = "127.0.0.1:9471"
)

// BindFlags binds the console's flags to a, its address defaulting to listen ("" turns the console
// off by default). Every program that serves the console takes the same flags.
func BindFlags(f *pflag.FlagSet, a *Access, listen string) {
	f.StringVar(&a.Addr, "console-listen", listen, "address of the web console (pages and /api/v1); empty to disable. "+
		"An address other than loopback needs --console-tls-cert and --console-tls-key")
	f.StringVar(&a.TLSCert, "console-tls-cert", "", "PEM certificate file: the console serves HTTPS only")
	f.StringVar(&a.TLSKey, "console-tls-key", "", "PEM key file of --console-tls-cert")
	f.StringVar(&a.TrustedHeader, "console-trusted-header", "", "header an authenticating proxy sets to the user's identity "+
		"(e.g. X-Forwarded-Email), read only from --console-trusted-proxy")
	f.StringSliceVar(&a.TrustedProxies, "console-trusted-proxy", nil, "addresses or CIDRs of the proxies --console-trusted-header is read from")
}
