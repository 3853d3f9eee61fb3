package db

import (
	"net/url"
	"regexp"
	"sort"
	"strings"
)

// Mask replaces every secret in messages.
const Mask = "***"

// secretKey matches the names of DSN settings that hold secrets, in URL
// queries (?password=...) and key=value DSNs (password=... sslpassword=...).
var secretKey = regexp.MustCompile(`(?i)^(password|passwd|pwd|pass|sslpassword|sslkey_password|secret|token|auth_token|access_token)$`)

// kvSecret finds key=value settings with a secret key in a DSN of any
// shape: libpq key=value strings (quoted values with backslash escapes
// included), URL queries, and the ;-separated ODBC-like forms.
var kvSecret = regexp.MustCompile(`(?i)\b(password|passwd|pwd|pass|sslpassword|sslkey_password|secret|token|auth_token|access_token)\s*=\s*('(?:[^'\\]|\\.)*'?|"(?:[^"\\]|\\.)*"?|[^\s&;]*)`)

// Secrets returns the secret substrings of a database address, in every
// spelling a message may show them (as written, URL-decoded, URL-encoded):
// the password of URL userinfo (scheme://user:pass@host, for any scheme,
// even when the rest of the URL does not parse), of MySQL driver DSNs
// (user:pass@tcp(host)/db), and the values of password-like settings in URL
// queries (?password=) and key=value DSNs (password='...'). Over-matching
// is preferred to a leak: for an address with an '@', everything between
// the first ':' of its userinfo and the last '@' counts as the password.
func Secrets(dsn string) []string {
	var raw []string
	// Userinfo: the part before the last '@' that precedes any '/'-path of
	// the host part, after an optional scheme://.
	rest := dsn
	if i := strings.Index(dsn, "://"); i >= 0 {
		rest = dsn[i+3:]
	} else if i := strings.Index(dsn, ":"); i >= 0 && isScheme(dsn[:i]) && strings.Contains(dsn[i+1:], "@") && !strings.Contains(dsn[:i], "@") {
		// "scheme:user:pass@host" (opaque form) — keep the scheme out —
		// unless what follows the '@' is a MySQL driver address
		// ("tcp(host)/db", "/db"): then it is "user:pass@..." with a ':'
		// in the password.
		at := strings.LastIndex(dsn, "@")
		if strings.Count(dsn[:at], ":") >= 2 && !mysqlAddr.MatchString(dsn[at+1:]) {
			rest = dsn[i+1:]
		}
	}
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		cred := rest[:at]
		if k := strings.Index(cred, ":"); k >= 0 {
			raw = append(raw, cred[k+1:])
		}
	}
	for _, m := range kvSecret.FindAllStringSubmatch(dsn, -1) {
		v := m[2]
		if len(v) >= 1 && (v[0] == '\'' || v[0] == '"') {
			raw = append(raw, v) // the quoted form as written
			v = strings.Trim(v, `'"`)
			v = strings.NewReplacer(`\\`, `\`, `\'`, `'`, `\"`, `"`).Replace(v)
		}
		raw = append(raw, v)
	}
	if u, err := url.Parse(dsn); err == nil {
		if u.User != nil {
			if p, ok := u.User.Password(); ok {
				raw = append(raw, p)
			}
		}
		for k, vs := range u.Query() {
			if secretKey.MatchString(k) {
				raw = append(raw, vs...)
			}
		}
	}
	seen := map[string]bool{}
	var out []string
	add := func(s string) {
		if s != "" && s != Mask && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, s := range raw {
		add(s)
		if d, err := url.QueryUnescape(s); err == nil {
			add(d)
		}
		if d, err := url.PathUnescape(s); err == nil {
			add(d)
		}
		add(url.QueryEscape(s))
		add(url.PathEscape(s))
		add(url.UserPassword("", s).String()[1:]) // userinfo escaping
	}
	// Longest first, so a secret that contains another is masked whole.
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// mysqlAddr matches what follows the '@' of a MySQL driver DSN:
// [net[(addr)]]/dbname.
var mysqlAddr = regexp.MustCompile(`^([A-Za-z0-9]*(\([^)]*\))?)?/`)

func isScheme(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return true
}

// Redact returns dsn with every secret (see Secrets) replaced by Mask, for
// messages and headers.
func Redact(dsn string) string {
	return Scrub(dsn, dsn)
}

// Scrub replaces in msg every secret of the database address dsn by Mask.
func Scrub(msg, dsn string) string {
	for _, s := range Secrets(dsn) {
		msg = strings.ReplaceAll(msg, s, Mask)
	}
	return msg
}

// ScrubError returns err with every secret of dsn masked in its message
// (nil for nil). errors.Is and errors.As still see the original error.
func ScrubError(err error, dsn string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	clean := Scrub(msg, dsn)
	if clean == msg {
		return err
	}
	return &scrubbed{msg: clean, err: err}
}

type scrubbed struct {
	msg string
	err error
}

func (s *scrubbed) Error() string { return s.msg }
func (s *scrubbed) Unwrap() error { return s.err }
