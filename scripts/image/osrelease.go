package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// osRelease is the image's /etc/os-release: scanners read ID and VERSION_ID to know which
// distribution's advisories apply to the packages in /var/lib/dpkg/status.d, so they are the
// build machine's, whose C library the image carries; the name says what the image is.
func osRelease(file string) ([]byte, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	kv, err := parseOSRelease(string(data), file)
	if err != nil {
		return nil, err
	}
	if kv["ID"] == "" || kv["VERSION_ID"] == "" {
		return nil, fmt.Errorf("%s: no ID or VERSION_ID: scanners could not tell which distribution's advisories apply", file)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "PRETTY_NAME=%s\n", strconv.Quote("Bursar (C library from "+cmpOr(kv["PRETTY_NAME"], kv["ID"])+")"))
	b.WriteString("NAME=\"Bursar\"\n")
	for _, k := range []string{"ID", "ID_LIKE", "VERSION_ID", "VERSION_CODENAME"} {
		if v := kv[k]; v != "" {
			fmt.Fprintf(&b, "%s=%s\n", k, strconv.Quote(v))
		}
	}
	return []byte(b.String()), nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// parseOSRelease reads os-release(5): KEY=value lines, values bare or quoted, # comments and
// blank lines skipped. A malformed line is an error naming file:line.
func parseOSRelease(data, file string) (map[string]string, error) {
	out := map[string]string{}
	for i, line := range strings.Split(data, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || k == "" || strings.ContainsAny(k, " \t\"'") {
			return nil, fmt.Errorf("%s:%d: %q is not KEY=value", file, i+1, line)
		}
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') {
			if v[len(v)-1] != v[0] {
				return nil, fmt.Errorf("%s:%d: %s's value has no closing quote", file, i+1, k)
			}
			v = v[1 : len(v)-1]
			v = strings.NewReplacer(`\"`, `"`, `\\`, `\`, `\$`, `$`, "\\`", "`").Replace(v)
		} else if strings.ContainsAny(v, "\"' \t") {
			return nil, fmt.Errorf("%s:%d: %s's value %q needs quotes", file, i+1, k, v)
		}
		out[k] = v
	}
	return out, nil
}
