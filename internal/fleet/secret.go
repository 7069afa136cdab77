package fleet

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// MinWebhookSecret is the shortest webhook signing secret accepted, in bytes. The secret keys the
// HMAC that tells a receiver an action came from Bursar; a short one can be guessed offline
// from a single signed request. `openssl rand -hex 32` makes a good one.
const MinWebhookSecret = 16

// WebhookSecret reads the signing secret of a webhook location: from the environment variable
// secret_env names when it is set and not empty, else from the file secret_file names. lookupEnv
// is os.LookupEnv outside tests. Errors name the location and the variable or file, never the
// secret; one shorter than MinWebhookSecret is refused.
func (l *Location) WebhookSecret(lookupEnv func(string) (string, bool)) ([]byte, error) {
	a := l.Actuator
	where := "location " + l.Name
	secret, from := "", ""
	if a.SecretEnv != "" {
		if v, ok := lookupEnv(a.SecretEnv); ok {
			secret, from = strings.TrimSpace(v), "environment variable "+a.SecretEnv
		}
	}
	if secret == "" && a.SecretFile != "" {
		b, err := os.ReadFile(a.SecretFile)
		if err != nil {
			return nil, fmt.Errorf("%s: reading its webhook signing secret (secret_file): %w", where, err)
		}
		secret, from = strings.TrimSpace(string(b)), "file "+a.SecretFile
	}
	switch {
	case secret == "" && a.SecretEnv != "" && a.SecretFile == "":
		return nil, fmt.Errorf("%s: its webhook signing secret is missing: set the environment variable %s (secret_env), "+
			"at least %d bytes, e.g. from `openssl rand -hex 32`", where, a.SecretEnv, MinWebhookSecret)
	case secret == "":
		return nil, fmt.Errorf("%s: its webhook signing secret is missing: %s is empty%s", where, a.SecretFile,
			map[bool]string{true: " and the environment variable " + a.SecretEnv + " is not set", false: ""}[a.SecretEnv != ""])
	case len(secret) < MinWebhookSecret:
		return nil, fmt.Errorf("%s: the webhook signing secret from %s is shorter than %d bytes: use a longer one, "+
			"e.g. from `openssl rand -hex 32`", where, from, MinWebhookSecret)
	}
	return []byte(secret), nil
}

// CheckSecrets reads every webhook location's signing secret, as arbiter run will, and returns
// what is missing or too short, each named by location.
func (c *Config) CheckSecrets(lookupEnv func(string) (string, bool)) error {
	var errs []error
	for i := range c.Locations {
		if c.Locations[i].Actuator.Kind != KindWebhook {
			continue
		}
		if _, err := c.Locations[i].WebhookSecret(lookupEnv); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
