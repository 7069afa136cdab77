package bus

import (
	"fmt"
	"slices"
	"strings"

	"github.com/nats-io/nats-server/v2/server"
)

// User is one NATS user of a role: an nkey (Nkey, the public key) or a name and password. Its
// permissions are the role's (Permissions) unless Permissions says otherwise, as a person's
// budget user does (BudgetPermissions). Tests and the embedded server's roles use it.
type User struct {
	Role        string
	Nkey        string
	Name        string
	Password    string
	Permissions *server.Permissions
}

// AccountsConfig renders the accounts block of a NATS server configuration: the arbiter's
// account with JetStream, exporting to each other role's account exactly what that role's
// account imports, and every user in its role's account. The embedded server runs on it, and
// deploy/nats/accounts.conf is it with the nkeys left to the environment; a cluster's servers
// include that file (docs/security.md, "NATS identities").
func AccountsConfig(users []User) (string, error) {
	byRole := map[string][]User{}
	for _, u := range users {
		if Permissions(u.Role) == nil {
			return "", fmt.Errorf("NATS user %q has an unknown role %q (one of %s)", u.Name+u.Nkey, u.Role, strings.Join(Roles, ", "))
		}
		byRole[u.Role] = append(byRole[u.Role], u)
	}
	var b strings.Builder
	b.WriteString("accounts: {\n")
	for _, role := range Roles {
		fmt.Fprintf(&b, "  %s: {\n", Account(role))
		if role == RoleArbiter {
			b.WriteString("    jetstream: enabled\n")
		}
		writeUsers(&b, byRole[role])
		if role == RoleArbiter {
			writeExports(&b)
		} else {
			writeImports(&b, role)
		}
		b.WriteString("  }\n")
	}
	b.WriteString("}\n")
	return b.String(), nil
}

func writeUsers(b *strings.Builder, users []User) {
	b.WriteString("    users: [\n")
	for _, u := range users {
		perms := u.Permissions
		if perms == nil {
			perms = Permissions(u.Role)
		}
		who := "nkey: " + u.Nkey // unquoted: deploy/'s file names an environment variable there
		if u.Nkey == "" {
			who = fmt.Sprintf("user: %s, password: %s", quote(u.Name), quote(u.Password))
		}
		fmt.Fprintf(b, "      {%s, permissions: {publish: {allow: %s}, subscribe: {allow: %s}}}\n",
			who, list(perms.Publish.Allow), list(perms.Subscribe.Allow))
	}
	b.WriteString("    ]\n")
}

// writeExports writes the arbiter account's exports: each subject some role imports, to the
// accounts of the roles that import it and no other.
func writeExports(b *strings.Builder) {
	var subjects []string
	to := map[string][]string{}
	for _, role := range Roles {
		for _, s := range imports(role) {
			if to[s] == nil {
				subjects = append(subjects, s)
			}
			to[s] = append(to[s], Account(role))
		}
	}
	b.WriteString("    exports: [\n")
	for _, s := range subjects {
		fmt.Fprintf(b, "      {service: %s, accounts: [%s]%s}\n", quote(s), strings.Join(to[s], ", "), exportResponse(s))
	}
	b.WriteString("    ]\n")
}

func writeImports(b *strings.Builder, role string) {
	b.WriteString("    imports: [\n")
	for _, s := range imports(role) {
		fmt.Fprintf(b, "      {service: {account: %s, subject: %s}}\n", Account(RoleArbiter), quote(s))
	}
	b.WriteString("    ]\n")
}

func list(subjects []string) string {
	q := make([]string, len(subjects))
	for i, s := range subjects {
		q[i] = quote(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// quote writes s as a quoted configuration string: "$JS.API.INFO" unquoted would be a variable.
func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// roleUsers are the embedded server's users: one nkey per role, then the extra ones.
func roleUsers(keys map[string]string, extra []User) []User {
	users := make([]User, 0, len(keys)+len(extra))
	for _, role := range Roles {
		if pub, ok := keys[role]; ok {
			users = append(users, User{Role: role, Nkey: pub})
		}
	}
	return append(users, slices.Clone(extra)...)
}
