/*
Copyright 2026 The Switchboard Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package browser_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"k8s.io/utils/ptr"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/switchboard-dev/switchboard/internal/testenv"
)

// tabTimeout bounds everything one test does in its tab: generous, for a
// loaded two-core machine.
const tabTimeout = 2 * time.Minute

// shotTimeout bounds one screenshot's capture (tab.screenshot).
const shotTimeout = 30 * time.Second

// tab is one test's browser tab, in a browser context of its own (its own
// cookies), recording every request it sends and every answer it gets.
type tab struct {
	t     *testing.T
	ctx   context.Context
	shots string // the test's screenshot directory
	n     int    // screenshots taken

	mu        sync.Mutex
	requests  []sentRequest
	extra     map[network.RequestID][]network.Headers // the headers as sent (ExtraInfo), one per hop
	answers   []answer
	downloads map[string]string // GUID → file path, once completed
	started   map[string]string // GUID → URL
	taken     map[string]bool   // GUIDs download returned
}

// sentRequest is a request as the browser put it on the wire: one hop of
// a chain of redirects, which share an id.
type sentRequest struct {
	id          network.RequestID
	hop         int
	url         string
	headers     network.Headers
	documentURL string
}

// answer is a response (a redirect too) the browser received.
type answer struct {
	url     string
	status  int64
	headers network.Headers
	doc     bool // a document (a page or a redirect to one)
}

// newTab opens a tab in a fresh browser context of the package's browser.
func newTab(t *testing.T) *tab {
	t.Helper()
	ctx, cancelTab := chromedp.NewContext(browserCtx, chromedp.WithNewBrowserContext())
	ctx, cancelTimeout := context.WithTimeout(ctx, tabTimeout)
	t.Cleanup(func() { cancelTimeout(); cancelTab() })
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	b := &tab{t: t, ctx: ctx, shots: filepath.Join(root, "_output", "browser", t.Name()),
		extra: map[network.RequestID][]network.Headers{}, downloads: map[string]string{}, started: map[string]string{}, taken: map[string]bool{}}
	// Screenshots of an earlier run of this test would mislead.
	if err := os.RemoveAll(b.shots); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(b.shots, 0o750); err != nil {
		t.Fatal(err)
	}
	// The first action attaches the tab; Listen needs it.
	if _, err := chromedp.Run(ctx, chromedp.Title()); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Listen(ctx, b.record); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	events := true
	if _, err := chromedp.Call(ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
		Behavior: browser.SetDownloadBehaviorBehaviorAllowAndName, BrowserContextID: chromedp.FromContext(ctx).BrowserContextID,
		DownloadPath: t.TempDir(), EventsEnabled: &events}); err != nil {
		t.Fatal(err)
	}
	return b
}

// record runs in the tab's event loop: it only stores.
func (b *tab) record(ev any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch e := ev.(type) {
	case *network.EventRequestWillBeSent:
		if r := e.RedirectResponse; r != nil {
			b.answers = append(b.answers, answer{url: r.URL, status: r.Status, headers: r.Headers, doc: e.Type == network.ResourceTypeDocument})
		}
		hop := 0
		for _, r := range b.requests {
			if r.id == e.RequestID {
				hop++
			}
		}
		b.requests = append(b.requests, sentRequest{id: e.RequestID, hop: hop, url: e.Request.URL, headers: e.Request.Headers, documentURL: e.DocumentURL})
	case *network.EventRequestWillBeSentExtraInfo:
		// One per hop, in the order of the hops.
		b.extra[e.RequestID] = append(b.extra[e.RequestID], e.Headers)
	case *network.EventResponseReceived:
		b.answers = append(b.answers, answer{url: e.Response.URL, status: e.Response.Status, headers: e.Response.Headers, doc: e.Type == network.ResourceTypeDocument})
	case *browser.EventDownloadWillBegin:
		b.started[e.GUID] = e.URL
	case *browser.EventDownloadProgress:
		if e.State == browser.DownloadProgressStateCompleted {
			b.downloads[e.GUID] = e.FilePath
		}
	}
}

// header is a header's value, whatever the case of its name.
func header(h network.Headers, name string) string {
	for k, v := range h {
		if strings.EqualFold(k, name) {
			return fmt.Sprint(v)
		}
	}
	return ""
}

// do runs actions in the tab, failing the test on an error.
func (b *tab) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// visit navigates to u as open does, without waiting for a page: u may
// answer with a download, which ends the navigation (net::ERR_ABORTED).
func (b *tab) visit(u string) {
	b.t.Helper()
	res, err := chromedp.Call(b.ctx, page.Navigate, page.NavigateParams{URL: u})
	if err != nil || res.ErrorText != "" && res.ErrorText != "net::ERR_ABORTED" {
		b.t.Fatalf("visit %s: %v %s", redact(u), err, res.ErrorText)
	}
}

// open navigates to u (typed into the address bar: no Referer) and waits
// until the page shows sel.
func (b *tab) open(u string, sel chromedp.Search) {
	b.t.Helper()
	b.do("open the link", chromedp.Navigate(u), chromedp.WaitVisible(sel))
}

// click clicks the element sel, as a person does (a mouse event on it),
// and waits until the next page shows next.
func (b *tab) click(sel chromedp.CSS, next chromedp.Search) {
	b.t.Helper()
	b.do("click "+string(sel), chromedp.WaitVisible(sel), chromedp.Click(sel), chromedp.WaitVisible(next))
}

// shown is the page the tab shows, as the browser has it.
type shown struct {
	url, title, html, text string
	// status and headers are of the answer the page was rendered from.
	status  int64
	headers network.Headers
}

func (b *tab) shown() shown {
	b.t.Helper()
	var p shown
	var err error
	if p.url, err = chromedp.Run(b.ctx, chromedp.Location()); err != nil {
		b.t.Fatal(err)
	}
	if p.title, err = chromedp.Run(b.ctx, chromedp.Title()); err != nil {
		b.t.Fatal(err)
	}
	if p.html, err = chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.documentElement.outerHTML`)); err != nil {
		b.t.Fatal(err)
	}
	if p.text, err = chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.body.innerText`)); err != nil {
		b.t.Fatal(err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for i := len(b.answers) - 1; i >= 0; i-- {
		if a := b.answers[i]; a.doc && a.url == p.url {
			p.status, p.headers = a.status, a.headers
			return p
		}
	}
	b.t.Fatalf("no answer recorded for the page %s", redact(p.url))
	return p
}

// screenshot saves the whole page as _output/browser/<test>/NN-name.png
// and logs its path.
func (b *tab) screenshot(name string) {
	b.t.Helper()
	// A capture waits for the renderer's next frame, and a tab that is
	// not in front may not draw one: on a loaded machine one capture of a
	// still page waited out the tab's whole deadline. The tab is brought
	// to front first, and a capture that draws no frame in shotTimeout is
	// asked for once more.
	var png []byte
	var err error
	for try := 0; try < 2; try++ {
		ctx, cancel := context.WithTimeout(b.ctx, shotTimeout)
		if _, err = chromedp.Call(ctx, page.BringToFront, cdp.Empty{}); err == nil {
			png, err = chromedp.Run(ctx, chromedp.FullScreenshot(100))
		}
		cancel()
		if err == nil {
			break
		}
	}
	if err != nil {
		b.t.Fatal(err)
	}
	if !bytes.HasPrefix(png, []byte("\x89PNG")) {
		b.t.Fatalf("the screenshot %s is not a PNG", name)
	}
	b.n++
	path := filepath.Join(b.shots, fmt.Sprintf("%02d-%s.png", b.n, name))
	if err := os.WriteFile(path, png, 0o600); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot: %s", path)
}

// noSecret fails when the page's HTML, text or title holds any of
// secrets (named, for the message, without their values).
func (p shown) noSecret(t *testing.T, secrets map[string]string) {
	t.Helper()
	for name, s := range secrets {
		if s == "" {
			t.Fatalf("no value for the secret %s: the check would prove nothing", name)
		}
		if strings.Contains(p.html, s) || strings.Contains(p.title, s) || strings.Contains(p.text, s) {
			t.Errorf("the page %s shows the %s", redact(p.url), name)
		}
	}
}

// webhookPage checks what every page of the webhook carries: status,
// Referrer-Policy: no-referrer, Cache-Control: no-store, its title, and
// the visible heading (the title when heading is "").
func (p shown) webhookPage(t *testing.T, status int64, title, heading string) {
	t.Helper()
	if !strings.HasPrefix(p.url, hookURL+"/") && !strings.HasPrefix(p.url, impatientURL+"/") {
		t.Fatalf("the browser is at %s, not on the webhook", redact(p.url))
	}
	if heading == "" {
		heading = title
	}
	if p.status != status || p.title != title || !strings.Contains(p.text, heading) {
		t.Errorf("the page is %d %q, want %d %q showing %q:\n%s", p.status, p.title, status, title, heading, p.text)
	}
	if rp := header(p.headers, "Referrer-Policy"); rp != "no-referrer" {
		t.Errorf("the page's Referrer-Policy is %q", rp)
	}
	if cc := header(p.headers, "Cache-Control"); cc != "no-store" {
		t.Errorf("the page's Cache-Control is %q", cc)
	}
}

// noRefererFromWebhook checks every request the tab sent so far, as the
// browser put it on the wire: none carries a Referer naming a webhook
// URL (whose query may hold a connect token, a code or a state, or whose
// path a short link), and every answer of the webhook — redirects
// included — carried Referrer-Policy: no-referrer. The only Referers
// allowed are the sandbox's: a provider's consent page sends its own, as
// the real ones may.
func (b *tab) noRefererFromWebhook() {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.requests) == 0 {
		b.t.Fatal("no request recorded")
	}
	for _, r := range b.requests {
		for _, ref := range []string{header(r.headers, "Referer"), header(b.extraOf(r), "Referer")} {
			if strings.HasPrefix(ref, hookURL) {
				b.t.Errorf("a request to %s carried the Referer of a webhook page", redact(r.url))
			}
			if ref != "" && !strings.HasPrefix(ref, sandboxURL) {
				b.t.Errorf("a request to %s carried a Referer from %s", redact(r.url), redact(ref))
			}
		}
	}
	for _, a := range b.answers {
		if strings.HasPrefix(a.url, hookURL) && header(a.headers, "Referrer-Policy") != "no-referrer" {
			b.t.Errorf("the webhook answered %s (%d) without Referrer-Policy: no-referrer", redact(a.url), a.status)
		}
	}
}

// sentTo is the requests the tab sent whose URL starts with prefix.
func (b *tab) sentTo(prefix string) []sentRequest {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []sentRequest
	for _, r := range b.requests {
		if strings.HasPrefix(r.url, prefix) {
			out = append(out, r)
		}
	}
	return out
}

// refererOf is the Referer request r carried ("" for none).
func (b *tab) refererOf(r sentRequest) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if ref := header(b.extraOf(r), "Referer"); ref != "" {
		return ref
	}
	return header(r.headers, "Referer")
}

// extraOf is the headers hop r was sent with, as the network stack
// reports them. The reports carry no URL, only the id the hops of a
// redirect chain share, so they are matched to hops by order, and only
// when there is one for every hop of the chain (nil otherwise: the
// request's own headers then speak for it). b.mu is held.
func (b *tab) extraOf(r sentRequest) network.Headers {
	hops := 0
	for _, x := range b.requests {
		if x.id == r.id {
			hops++
		}
	}
	if extra := b.extra[r.id]; len(extra) == hops {
		return extra[r.hop]
	}
	return nil
}

// probe is a server on another loopback origin that records the Referer
// of each request it receives: a page's own request to it shows, over the
// wire, what the page lets out.
type probe struct {
	srv *httptest.Server
	got chan string
}

func newProbe(t *testing.T) *probe {
	t.Helper()
	p := &probe{got: make(chan string, 16)}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		// Only the page's own request: the window it opened asks for its
		// favicon too, with the probe as its Referer.
		if r.URL.Path == "/probe" {
			p.got <- r.Header.Get("Referer")
		}
	}))
	t.Cleanup(p.srv.Close)
	return p
}

// refererFrom makes the page the tab shows open the probe in a new window,
// as a person following a link of it would (the page's referrer policy
// applies; the webhook's pages allow no fetch at all under their CSP, and
// a navigation of the tab itself would lose the page), and returns the
// Referer the probe received.
func (p *probe) refererFrom(b *tab) string {
	b.t.Helper()
	gesture := func(e *cdpruntime.EvaluateParams) { e.UserGesture = ptr.To(true) }
	b.do("open the probe from the page",
		chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`window.open(%q, "_blank"); undefined`, p.srv.URL+"/probe"), gesture))
	select {
	case ref := <-p.got:
		return ref
	case <-b.ctx.Done():
		b.t.Fatal("the probe never received the page's request")
		return ""
	}
}

// cookies are the cookies the browser holds for the webhook's URLs.
func (b *tab) cookies(paths ...string) map[string]*network.Cookie {
	b.t.Helper()
	urls := make([]string, 0, len(paths))
	for _, p := range paths {
		urls = append(urls, hookURL+p)
	}
	res, err := chromedp.Call(b.ctx, network.GetCookies, network.GetCookiesParams{URLs: urls})
	if err != nil {
		b.t.Fatal(err)
	}
	out := map[string]*network.Cookie{}
	for _, c := range res.Cookies {
		out[c.Name] = c
	}
	return out
}

// download waits for a new download (one it has not returned before) of
// a URL starting with prefix to complete, and returns its bytes.
func (b *tab) download(prefix string) []byte {
	b.t.Helper()
	var path string
	testenv.EventuallyWithin(b.t, tabTimeout, "a download from "+prefix, func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		for guid, u := range b.started {
			if p, ok := b.downloads[guid]; ok && !b.taken[guid] && strings.HasPrefix(u, prefix) {
				path, b.taken[guid] = p, true
				return true
			}
		}
		return false
	})
	data, err := os.ReadFile(path) //nolint:gosec // the file the browser just downloaded into the test's directory
	if err != nil {
		b.t.Fatal(err)
	}
	return data
}

// secretParams are query parameters whose values are secrets.
var secretParams = regexp.MustCompile(`(?i)((?:^|[?&])(?:token|code|state|X-Amz-Signature|X-Amz-Credential)=)[^&]*`)

// redact is a URL fit for a test log: secret parameters blanked, and a
// share link's short token cut.
func redact(u string) string {
	if x, err := url.Parse(u); err == nil && strings.HasPrefix(x.Path, "/r/") {
		x.Path = "/r/SHORT"
		u = x.String()
	}
	return secretParams.ReplaceAllString(u, "${1}…")
}
