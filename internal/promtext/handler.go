package promtext

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"strconv"
	"strings"
)

// ContentType is the page's media type, as Prometheus's Go client
// answers a scraper.
const ContentType = "text/plain; version=0.0.4; charset=utf-8; escaping=underscores"

// Handler serves the page, gzipped to a client that accepts it.
func (r *Registry) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var b bytes.Buffer
		r.page(&b)
		h := w.Header()
		h.Set("Content-Type", ContentType)
		h.Add("Vary", "Accept-Encoding")
		if acceptsGzip(req.Header.Get("Accept-Encoding")) {
			h.Set("Content-Encoding", "gzip")
			zw := gzip.NewWriter(w)
			_, _ = b.WriteTo(zw)
			_ = zw.Close()
			return
		}
		h.Set("Content-Length", strconv.Itoa(b.Len()))
		_, _ = b.WriteTo(w)
	})
}

// acceptsGzip says whether an Accept-Encoding header lists gzip with a
// weight above zero.
func acceptsGzip(header string) bool {
	for part := range strings.SplitSeq(header, ",") {
		coding, params, _ := strings.Cut(part, ";")
		if !strings.EqualFold(strings.TrimSpace(coding), "gzip") {
			continue
		}
		q, hasQ := strings.CutPrefix(strings.TrimSpace(params), "q=")
		if !hasQ {
			return true
		}
		w, err := strconv.ParseFloat(strings.TrimSpace(q), 64)
		return err == nil && w > 0
	}
	return false
}
