package browsertest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Tab is one test's page in the shared browser, in a browser context of its own (its own cookies
// and storage). Its methods end the test on an error, so a test reads as the steps a person takes.
type Tab struct {
	t   testing.TB
	ctx context.Context
}

// stepTimeout bounds one step (a page load, a click, a read). Generous: it only stops a test
// that would otherwise hang, and a loaded machine can take seconds to render a page.
const stepTimeout = time.Minute

// NewTab opens a fresh tab for t and closes it when t ends. It skips t when no browser is
// installed (see the package doc).
func NewTab(t testing.TB) *Tab {
	t.Helper()
	parent := need(t)
	ctx, cancel := chromedp.NewContext(parent, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	p := &Tab{t: t, ctx: ctx}
	p.do("opening a tab") // the first Run makes the tab; it must not run under a timeout
	return p
}

// run runs a on the tab within stepTimeout, failing the test with what was being done.
func run[T any](p *Tab, what string, a chromedp.Action[T]) T {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, stepTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		p.t.Fatalf("browser: %s: %v", what, err)
	}
	return v
}

// do runs steps on the tab, without a timeout when there are none (the tab's first Run).
func (p *Tab) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	if len(steps) == 0 {
		if err := chromedp.Do(p.ctx); err != nil {
			p.t.Fatalf("browser: %s: %v", what, err)
		}
		return
	}
	run(p, what, chromedp.Steps(steps...))
}

// Open loads url and waits until its document has loaded.
func (p *Tab) Open(url string) {
	p.t.Helper()
	p.do("opening "+url, chromedp.Navigate(url), waitLoaded())
}

// URL is the address of the page shown.
func (p *Tab) URL() string {
	p.t.Helper()
	return run(p, "reading the address", chromedp.Location())
}

// TestSel is the CSS selector of the element with data-test=name.
func TestSel(name string) string { return fmt.Sprintf("[data-test=%s]", jsString(name)) }

// Click clicks the element with data-test=name, waiting for it to show first, and returns
// without waiting for what the click does (see Follow for a link or a button that loads a page).
func (p *Tab) Click(name string) {
	p.t.Helper()
	p.do("clicking "+TestSel(name), chromedp.Click(chromedp.CSS(TestSel(name)), chromedp.NodeVisible))
}

// Follow clicks the element with data-test=name and waits for the page the click loads.
func (p *Tab) Follow(name string) {
	p.t.Helper()
	sel := TestSel(name)
	p.do("following "+sel, markDocument(), chromedp.Click(chromedp.CSS(sel), chromedp.NodeVisible), waitNewDocument())
}

// Has says whether an element matches the CSS selector sel now, without waiting for one.
func (p *Tab) Has(sel string) bool {
	p.t.Helper()
	return run(p, "looking for "+sel, chromedp.Evaluate[bool](fmt.Sprintf(`document.querySelector(%s) !== null`, jsString(sel))))
}

// Text is the text of the first element that matches sel, as rendered (innerText), waiting for
// one to exist.
func (p *Tab) Text(sel string) string {
	p.t.Helper()
	p.do("waiting for "+sel, chromedp.WaitReady(chromedp.CSS(sel)))
	return run(p, "reading "+sel, chromedp.Evaluate[string](fmt.Sprintf(`document.querySelector(%s).innerText`, jsString(sel))))
}

// Texts are the texts of every element that matches sel now, in document order; none when
// nothing matches.
func (p *Tab) Texts(sel string) []string {
	p.t.Helper()
	return run(p, "reading "+sel, chromedp.Evaluate[[]string](fmt.Sprintf(
		`Array.from(document.querySelectorAll(%s), e => e.innerText)`, jsString(sel))))
}

// Rows are the cells' texts of each row (tr) of the table that matches sel, header rows included
// (th cells as well as td).
func (p *Tab) Rows(sel string) [][]string {
	p.t.Helper()
	p.do("waiting for "+sel, chromedp.WaitReady(chromedp.CSS(sel)))
	return run(p, "reading the rows of "+sel, chromedp.Evaluate[[][]string](fmt.Sprintf(
		`Array.from(document.querySelector(%s).querySelectorAll("tr"), r => Array.from(r.cells, c => c.innerText))`,
		jsString(sel))))
}

// Table reads the body rows of the table that matches sel as a person reads them: each row's
// cells by column, the column being the cell's data-col attribute, else its header's text. Rows
// without td cells (headers) are left out.
func (p *Tab) Table(sel string) []map[string]string {
	p.t.Helper()
	p.do("waiting for "+sel, chromedp.WaitReady(chromedp.CSS(sel)))
	return run(p, "reading the table "+sel, chromedp.Evaluate[[]map[string]string](fmt.Sprintf(`(() => {
	const table = document.querySelector(%s);
	const heads = Array.from(table.querySelectorAll("thead th"), h => h.innerText.trim());
	return Array.from(table.querySelectorAll("tbody tr"))
		.filter(r => r.querySelector("td"))
		.map(r => Object.fromEntries(Array.from(r.cells, (c, i) => [c.dataset.col || heads[i] || String(i), c.innerText.trim()])));
})()`, jsString(sel))))
}

// Attr is the attribute name of the first element that matches sel ("" when it has none).
func (p *Tab) Attr(sel, name string) string {
	p.t.Helper()
	p.do("waiting for "+sel, chromedp.WaitReady(chromedp.CSS(sel)))
	return run(p, "reading "+name+" of "+sel, chromedp.Evaluate[string](fmt.Sprintf(
		`document.querySelector(%s).getAttribute(%s) ?? ""`, jsString(sel), jsString(name))))
}

// Submit fills the fields of the form that matches sel (by their name attribute) and submits it
// as its own submit button would (form.requestSubmit, so the form's handlers run), then waits for
// the page the server answers with.
func (p *Tab) Submit(sel string, fields map[string]string) {
	p.t.Helper()
	steps := []chromedp.Action[chromedp.Void]{chromedp.WaitReady(chromedp.CSS(sel))}
	for name, value := range fields {
		field := fmt.Sprintf("%s [name=%s]", sel, jsString(name))
		steps = append(steps, chromedp.SetValue(chromedp.CSS(field), value))
	}
	steps = append(steps, markDocument(),
		eval(fmt.Sprintf(`document.querySelector(%s).requestSubmit()`, jsString(sel))), waitNewDocument())
	p.do("submitting "+sel, steps...)
}

// Eval runs a JavaScript expression on the page and returns its value as JSON decodes it, the
// value of a promise once it settles; for what the helpers above do not cover (a test's own
// fetch, say).
func (p *Tab) Eval(expr string) any {
	p.t.Helper()
	return run(p, "evaluating "+expr, chromedp.Evaluate[any](expr, chromedp.EvalAwaitPromise))
}

// WaitFor waits until the JavaScript expression is truthy, as for a live update; it fails t when
// the step's timeout passes first.
func (p *Tab) WaitFor(expr string) {
	p.t.Helper()
	p.do("waiting for "+expr, waitTrue(expr))
}

func eval(expr string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := chromedp.Evaluate[any](expr)(ctx, t)
		return chromedp.Void{}, err
	}
}

// markDocument marks the page shown, so waitNewDocument can tell when another replaced it.
func markDocument() chromedp.Action[chromedp.Void] { return eval(`window.__browsertestOld = true`) }

// waitNewDocument waits for a document without markDocument's mark, loaded.
func waitNewDocument() chromedp.Action[chromedp.Void] {
	return waitTrue(`window.__browsertestOld === undefined && document.readyState === "complete"`)
}

// waitLoaded waits until the document shown has loaded (its scripts ran, its images came).
func waitLoaded() chromedp.Action[chromedp.Void] {
	return waitTrue(`document.readyState === "complete"`)
}

// pollEvery is how often waitTrue asks the page again.
const pollEvery = 50 * time.Millisecond

// waitTrue evaluates expr until it is true, until ctx ends. It asks again on an error, as the page
// it asks may be going away: during a navigation the old document's JavaScript context is
// destroyed under a running evaluation (chromedp.Poll fails with "Cannot find context" then).
func waitTrue(expr string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		var last error
		for {
			ok, err := chromedp.Evaluate[bool](expr)(ctx, t)
			if err == nil && ok {
				return chromedp.Void{}, nil
			}
			if err != nil {
				last = err
			}
			select {
			case <-ctx.Done():
				return chromedp.Void{}, fmt.Errorf("waiting for %s: %w (last error: %v)", expr, ctx.Err(), last)
			case <-time.After(pollEvery):
			}
		}
	}
}

// jsString quotes s as a JavaScript (and CSS) string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s) // a string always marshals
	return string(b)
}
