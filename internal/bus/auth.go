package bus

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/nats-io/nats.go"
)

// Auth says how a program proves who it is to NATS. Every field is a file path or a name,
// never a secret, so none of it is a secret when it comes from a flag; the password alone comes
// from the environment.
type Auth struct {
	Role         string // the program's role; picks the inbox prefix and the default key
	Creds        string // a NATS .creds file (JWT and seed)
	NkeyFile     string // a file holding an nkey seed
	User         string
	Password     string // from BURSAR_NATS_PASSWORD or the file in BURSAR_NATS_PASSWORD_FILE
	TLSCA        string // CA bundle that signs the server's certificate
	TLSCert      string // client certificate, for servers that verify clients
	TLSKey       string
	DefaultCreds string // the embedded server's credentials dir, used when nothing else is given
}

// Options turns a into connection options. With no credentials given it uses the role's key
// under DefaultCreds when that file exists (what "arbiter run" wrote on this machine).
func (a Auth) Options() ([]nats.Option, error) {
	var opts []nats.Option
	if a.Role != "" {
		opts = append(opts, nats.CustomInboxPrefix(InboxPrefix(a.Role)))
	}
	cred, err := a.credential()
	if err != nil {
		return nil, err
	}
	if cred != nil {
		opts = append(opts, cred)
	}
	if a.TLSCA != "" {
		opts = append(opts, nats.RootCAs(a.TLSCA))
	}
	if (a.TLSCert == "") != (a.TLSKey == "") {
		return nil, fmt.Errorf("NATS client TLS needs both --nats-tls-cert and --nats-tls-key")
	}
	if a.TLSCert != "" {
		opts = append(opts, nats.ClientCert(a.TLSCert, a.TLSKey))
	}
	return opts, nil
}

// credential picks the one way a authenticates; more than one is an error.
func (a Auth) credential() (nats.Option, error) {
	given := 0
	for _, v := range []string{a.Creds, a.NkeyFile, a.User} {
		if v != "" {
			given++
		}
	}
	if given > 1 {
		return nil, fmt.Errorf("NATS credentials: give only one of --nats-creds, --nats-nkey and --nats-user")
	}
	switch {
	case a.Creds != "":
		return nats.UserCredentials(a.Creds), nil
	case a.NkeyFile != "":
		return nkeyOption(a.NkeyFile)
	case a.User != "":
		if a.Password == "" {
			return nil, fmt.Errorf("--nats-user %s has no password: set BURSAR_NATS_PASSWORD or BURSAR_NATS_PASSWORD_FILE", a.User)
		}
		return nats.UserInfo(a.User, a.Password), nil
	case a.Password != "":
		return nil, fmt.Errorf("a NATS password is set but no --nats-user")
	}
	if a.DefaultCreds == "" || a.Role == "" {
		return nil, nil
	}
	path := SeedFile(a.DefaultCreds, a.Role)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err := checkPrivate(a.DefaultCreds); err != nil {
		return nil, err
	}
	if err := checkPrivate(path); err != nil {
		return nil, err
	}
	return nkeyOption(path)
}

func nkeyOption(path string) (nats.Option, error) {
	opt, err := nats.NkeyOptionFromSeed(path)
	if err != nil {
		return nil, fmt.Errorf("NATS nkey %s: %w", path, err)
	}
	return opt, nil
}
