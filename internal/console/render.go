package console

import (
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"strings"

	"github.com/bursar-dev/bursar/internal/cli"
	"github.com/bursar-dev/bursar/internal/report"
)

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed static
var staticFS embed.FS

// pageNames are the pages, each a templates/<name>.html defining "content" inside the layout.
var pageNames = []string{"fleet", "decisions", "decision", "approvals", "budgets", "costs", "anomalies", "login", "error"}

// parsePages parses each page with the layout and the shared parts.
func parsePages() (map[string]*template.Template, error) {
	out := map[string]*template.Template{}
	for _, name := range pageNames {
		t, err := template.New(name).Funcs(funcs).ParseFS(templateFiles, "templates/layout.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("console page %s: %w", name, err)
		}
		out[name] = t
	}
	return out, nil
}

// staticFiles serves the embedded static folder (the stylesheet, the script, uPlot).
func staticFiles() http.Handler {
	sub, err := fs.Sub(staticFS, "static")
	if err != nil {
		panic(err) // the folder is embedded: it is there
	}
	return http.StripPrefix("/static/", http.FileServerFS(sub))
}

// view is what every page's template gets: the page's own data beside who is looking.
type view struct {
	Title, Nav string
	Who        string
	CSRF       string
	Path       string
	Data       any
}

// page renders the page name with data, for whoever sent r.
func (s *Server) page(w http.ResponseWriter, r *http.Request, status int, name string, data any) {
	c, _ := s.identify(r)
	v := view{Title: titles[name], Nav: name, Who: c.Who, CSRF: c.CSRF, Path: r.URL.RequestURI(), Data: data}
	if r.Method != http.MethodGet { // after a refused POST, log in to come back to the page, not the POST's path
		v.Path = pagePaths[name]
	}
	var b strings.Builder
	if err := s.pages[name].ExecuteTemplate(&b, "layout", v); err != nil {
		s.log.Error("console page failed to render", "page", name, "err", err)
		http.Error(w, "the page failed to render; the server log says why", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(b.String()))
}

// pagePaths are where each page is read, for the login link after a POST; "" reads as /.
var pagePaths = map[string]string{"decisions": "/decisions", "decision": "/decisions", "approvals": "/approvals",
	"budgets": "/budgets", "costs": "/costs", "anomalies": "/anomalies"}

var titles = map[string]string{"fleet": "Fleet", "decisions": "Decisions", "decision": "Decision", "approvals": "Approvals",
	"budgets": "Budgets", "costs": "Costs", "anomalies": "Cost anomalies", "login": "Log in", "error": "Error"}

// fail shows a page's error: 400 with the parameter at fault, or 500.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	status := http.StatusInternalServerError
	if _, bad := err.(badRequest); bad {
		status = http.StatusBadRequest
	} else {
		s.log.Warn("console page failed", "path", r.URL.Path, "err", err)
	}
	s.page(w, r, status, "error", err.Error())
}

// refuse shows why a write was refused.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, status int, why string) {
	s.page(w, r, status, "error", why)
}

// funcs are the templates' helpers.
var funcs = template.FuncMap{
	"cell":   cell,
	"detail": detail,
	"list":   func(v any) []string { return asStrings(v) },
}

// cell is a row's value as text, written as the API's JSON writes it (numbers exactly so), so a
// figure on a page reads the same as in /api/v1.
func cell(row cli.Row, col string) string {
	v, ok := row[col]
	if !ok || v == nil {
		return ""
	}
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// detail reads a column holding a JSON array of objects (decisions' actions_detail), whether the
// row holds it as a value or as JSON text.
func detail(row cli.Row, col string) []map[string]any {
	v := row[col]
	var raw []byte
	if s, ok := v.(string); ok {
		raw = []byte(s)
	} else {
		var err error
		if raw, err = json.Marshal(v); err != nil {
			return nil
		}
	}
	var out []map[string]any
	if json.Unmarshal(raw, &out) != nil {
		return nil
	}
	return out
}

// asStrings reads a list column (reasons) as strings, whether a list or comma-separated text.
func asStrings(v any) []string {
	switch x := v.(type) {
	case nil:
		return nil
	case []string:
		return x
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			out = append(out, fmt.Sprint(e))
		}
		return out
	case string:
		if x == "" {
			return nil
		}
		return strings.Split(x, ",")
	}
	return []string{fmt.Sprint(v)}
}

// section is one report on a page: its answer, or why it failed.
type section struct {
	Name   string
	Answer report.Answer
	Err    string
	// Note says how the page asked for it, where that differs from the page's choice.
	Note string
}

// sectionOf wraps an answer or its error.
func sectionOf(name string, a report.Answer, err error) section {
	if err != nil {
		return section{Name: name, Err: err.Error()}
	}
	return section{Name: name, Answer: a}
}
