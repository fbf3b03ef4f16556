package web

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/jake-bot/jake-bot/core"
)

//go:embed assets
var assets embed.FS

var pageTemplate = template.Must(template.ParseFS(assets, "assets/index.html"))

// csrfHeader carries the session's CSRF token on every request that
// changes something; a cross-site form cannot set it.
const csrfHeader = "X-CSRF-Token"

// maxMessageBody bounds a JSON message from the page.
const maxMessageBody = 1 << 20

// maxUploadFiles bounds the files of one message, as a runner does
// (plugins/remote): a body of tiny parts would otherwise make as many
// files as it has parts.
const maxUploadFiles = 64

func (a *Adapter) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /login", a.login)
	mux.Handle("GET /{$}", a.signedIn(a.page))
	static, _ := fs.Sub(assets, "assets")
	mux.Handle("GET /static/", a.signedIn(func(w http.ResponseWriter, r *http.Request, _ session) {
		w.Header().Set("Cache-Control", "no-cache")
		http.StripPrefix("/static/", http.FileServerFS(static)).ServeHTTP(w, r)
	}))
	mux.Handle("GET /api/events", a.signedIn(a.events))
	mux.Handle("GET /api/files/{id}", a.signedIn(a.download))
	mux.Handle("POST /api/channels", a.signedIn(a.changes(a.newChannel)))
	mux.Handle("POST /api/messages", a.signedIn(a.changes(a.postMessage)))
	mux.Handle("POST /api/upload", a.signedIn(a.changes(a.upload)))
	return securityHeaders(mux)
}

// securityHeaders keeps the page out of frames and its scripts its own.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		next.ServeHTTP(w, r)
	})
}

// login signs a browser in with the token from the sign-in URL, and
// sends it to the page, whose address then no longer holds the token.
// Wrong tokens are throttled by client address (throttle.go).
func (a *Adapter) login(w http.ResponseWriter, r *http.Request) {
	now, addr := a.clock.Now(), clientAddr(r.RemoteAddr)
	if wait, blocked := a.logins.blocked(addr, now); blocked {
		secs := int(wait.Round(time.Second) / time.Second)
		w.Header().Set("Retry-After", strconv.Itoa(max(secs, 1)))
		http.Error(w, fmt.Sprintf("Too many wrong sign-ins from your address: try again in %d s.", max(secs, 1)), http.StatusTooManyRequests)
		return
	}
	if !same(r.URL.Query().Get("token"), string(a.cfg.Token)) {
		if first, before := a.logins.fail(addr, now); first {
			args := []any{"remote", addr}
			if before > 0 {
				args = append(args, "refused_in_the_window_before", before)
			}
			a.logger.Warn("web sign-in refused: wrong token (the next ones from this address within a minute are not logged)", args...)
		}
		http.Error(w, "Wrong or missing token: use the sign-in URL jakebot printed when it started.", http.StatusUnauthorized)
		return
	}
	a.logins.succeed(addr)
	id, ses, err := a.sessions.start(r.Context(), now)
	if err != nil {
		a.logger.Warn("web sign-in not shared with the other gateways: after a takeover, sign in again", "err", err)
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: id, Path: "/", Expires: ses.expires,
		HttpOnly: true, Secure: a.cfg.TLSCert != "" || r.TLS != nil || behindTLS(r), SameSite: http.SameSiteStrictMode})
	a.logger.Info("web sign-in", "remote", r.RemoteAddr)
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// behindTLS reports whether a reverse proxy says the browser used HTTPS.
// It can only make the cookie stricter, so a forged header costs nothing.
func behindTLS(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
}

// signedIn answers 401, and does nothing else, without a valid session.
func (a *Adapter) signedIn(next func(http.ResponseWriter, *http.Request, session)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ses, ok := a.sessions.of(r, a.clock.Now())
		if !ok {
			http.Error(w, "Not signed in: open the sign-in URL jakebot printed when it started.", http.StatusUnauthorized)
			return
		}
		next(w, r, ses)
	})
}

// changes guards a request that changes something: it must carry the
// session's CSRF token and, when the browser names one, the page's own
// Origin.
func (a *Adapter) changes(next func(http.ResponseWriter, *http.Request, session)) func(http.ResponseWriter, *http.Request, session) {
	return func(w http.ResponseWriter, r *http.Request, ses session) {
		if !same(r.Header.Get(csrfHeader), ses.csrf) {
			http.Error(w, "Missing or wrong CSRF token.", http.StatusForbidden)
			return
		}
		if !a.ownOrigin(r) {
			http.Error(w, "Foreign origin.", http.StatusForbidden)
			return
		}
		next(w, r, ses)
	}
}

// ownOrigin reports whether r comes from the page itself: no Origin (not
// a cross-site browser request) or the host it was sent to.
func (a *Adapter) ownOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	scheme := "http://"
	if r.TLS != nil || a.cfg.TLSCert != "" {
		scheme = "https://"
	}
	// Behind a reverse proxy the browser's origin is the proxy's host,
	// which the proxy passes on as Host (or X-Forwarded-Host).
	for _, host := range []string{r.Host, r.Header.Get("X-Forwarded-Host")} {
		if host != "" && (origin == scheme+host || origin == "https://"+host) {
			return true
		}
	}
	return false
}

// pageData is what the page's template shows: the session's CSRF token,
// and the plugins and directories the start form offers.
type pageData struct {
	CSRF           string
	Plugins        []pluginOption
	DefaultWorkdir string
	Workdirs       []string
}

type pluginOption struct{ ID, Name string }

// maxWorkdirs bounds the directories the start form suggests.
const maxWorkdirs = 25

// page serves the chat page with the session's CSRF token in it.
func (a *Adapter) page(w http.ResponseWriter, r *http.Request, ses session) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	data := pageData{CSRF: ses.csrf}
	for _, p := range a.opts.Plugins {
		data.Plugins = append(data.Plugins, pluginOption{ID: p.ID(), Name: p.Name()})
	}
	if a.opts.Lookup != nil {
		// The directories the web user may work in, as the router decides
		// it: the default workdir first, the roots open to them, its
		// subdirectories.
		data.Workdirs = a.opts.Lookup.WorkdirSuggestions(core.Message{Key: core.ConversationKey{Platform: Name, User: User}}, "", maxWorkdirs)
	}
	if len(data.Workdirs) > 0 {
		data.DefaultWorkdir = data.Workdirs[0]
	}
	if err := pageTemplate.Execute(w, data); err != nil {
		a.logger.Warn("web page", "err", err)
	}
}

// events streams the page's conversations: a snapshot, then every change,
// as server-sent events. A foreign Origin is refused.
func (a *Adapter) events(w http.ResponseWriter, r *http.Request, _ session) {
	if !a.ownOrigin(r) {
		http.Error(w, "Foreign origin.", http.StatusForbidden)
		return
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // nginx: pass events on at once
	events, stop := a.store.subscribe()
	defer stop()
	heartbeat := time.NewTicker(25 * time.Second)
	defer heartbeat.Stop()
	for {
		select {
		case data, open := <-events:
			if !open {
				return // fell behind: the page reconnects for a new snapshot
			}
			if _, err := fmt.Fprintf(w, "data: %s\n\n", data); err != nil {
				return
			}
		case <-heartbeat.C:
			if _, err := io.WriteString(w, ": keep-alive\n\n"); err != nil {
				return
			}
		case <-r.Context().Done():
			return
		}
		flusher.Flush()
	}
}

// download serves a file the bot sent.
func (a *Adapter) download(w http.ResponseWriter, r *http.Request, _ session) {
	f, ok := a.store.file(r.PathValue("id"))
	if !ok {
		http.Error(w, "No such file (only the latest files are kept).", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": path.Base(f.name)}))
	w.Header().Set("Content-Length", strconv.Itoa(len(f.data)))
	w.Write(f.data)
}

func (a *Adapter) newChannel(w http.ResponseWriter, r *http.Request, _ session) {
	c := a.store.newChannel()
	writeJSON(w, http.StatusCreated, map[string]string{"id": c.ID})
}

// postMessage takes {"channel", "text"}: the user's message, or command.
func (a *Adapter) postMessage(w http.ResponseWriter, r *http.Request, _ session) {
	var in struct{ Channel, Text string }
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxMessageBody)).Decode(&in); err != nil {
		http.Error(w, "Want JSON {channel, text}: "+err.Error(), http.StatusBadRequest)
		return
	}
	in.Text = strings.TrimSpace(in.Text)
	if in.Text == "" {
		http.Error(w, "Empty message.", http.StatusBadRequest)
		return
	}
	a.take(w, in.Channel, in.Text, nil)
}

// upload takes a multipart form: channel, text and files.
func (a *Adapter) upload(w http.ResponseWriter, r *http.Request, _ session) {
	r.Body = http.MaxBytesReader(w, r.Body, a.cfg.MaxUploadBytes+maxMessageBody)
	mr, err := r.MultipartReader()
	if err != nil {
		http.Error(w, "Want a multipart form: "+err.Error(), http.StatusBadRequest)
		return
	}
	var channel, text string
	var files []core.Attachment
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			http.Error(w, uploadError(err, a.cfg.MaxUploadBytes), http.StatusRequestEntityTooLarge)
			return
		}
		// Each part within its own limit: the body's bounds only the whole.
		limit := int64(maxMessageBody)
		if p.FormName() == "file" {
			limit = a.cfg.MaxUploadBytes
		}
		data, err := io.ReadAll(io.LimitReader(p, limit+1))
		if err == nil && int64(len(data)) > limit {
			err = &http.MaxBytesError{Limit: limit}
		}
		if err != nil {
			http.Error(w, uploadError(err, limit), http.StatusRequestEntityTooLarge)
			return
		}
		switch p.FormName() {
		case "channel":
			channel = string(data)
		case "text":
			text = strings.TrimSpace(string(data))
		case "file":
			if len(files) == maxUploadFiles {
				http.Error(w, fmt.Sprintf("At most %d files in one message: nothing was sent.", maxUploadFiles), http.StatusRequestEntityTooLarge)
				return
			}
			files = append(files, attachment(p.FileName(), p.Header.Get("Content-Type"), data))
		}
	}
	if text == "" && len(files) == 0 {
		http.Error(w, "Nothing to send.", http.StatusBadRequest)
		return
	}
	a.take(w, channel, text, files)
}

func uploadError(err error, limit int64) string {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		if limit < 1<<20 {
			return fmt.Sprintf("The upload is over the %d bytes limit (WEB_MAX_UPLOAD_BYTES): nothing was sent.", limit)
		}
		return fmt.Sprintf("The upload is over the %d MB limit (WEB_MAX_UPLOAD_BYTES): nothing was sent.", limit>>20)
	}
	return "The upload failed: " + err.Error()
}

// attachment is a file the page sent, already read.
func attachment(name, contentType string, data []byte) core.Attachment {
	kind := core.FileDocument
	switch {
	case strings.HasPrefix(contentType, "image/"):
		kind = core.FileImage
	case strings.HasPrefix(contentType, "audio/"):
		kind = core.FileVoice
	}
	return core.Attachment{Name: name, Size: int64(len(data)), Kind: kind,
		Open: func(context.Context) (io.ReadCloser, error) {
			return io.NopCloser(strings.NewReader(string(data))), nil
		}}
}

// take shows the user's message in its channel and hands it to the
// router.
func (a *Adapter) take(w http.ResponseWriter, channel, text string, files []core.Attachment) {
	if !a.store.hasChannel(channel) {
		http.Error(w, "No such conversation: reload the page.", http.StatusNotFound)
		return
	}
	shown := text
	for _, f := range files {
		shown += "\n📎 " + f.Name
	}
	m := a.store.add(channel, &message{From: "user", Text: strings.TrimSpace(shown)})
	msg := core.Message{Key: core.ConversationKey{Platform: Name, User: User, Channel: channel}, ID: m.ID,
		UserName: User, Text: text, Files: files}
	if !a.deliver(msg) {
		http.Error(w, "jakebot is shutting down.", http.StatusServiceUnavailable)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"id": m.ID})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
