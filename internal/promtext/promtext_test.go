package promtext

import (
	"bytes"
	"compress/gzip"
	"io"
	"math"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

func page(t *testing.T, r *Registry) string {
	t.Helper()
	var b bytes.Buffer
	if _, err := r.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestPage: families sorted by name, label names sorted whatever order
// they were given in, series sorted by their values, histograms'
// cumulative buckets with +Inf then _sum and _count, numbers in their
// shortest form, escapes in HELP and label values, a family without
// series left out.
func TestPage(t *testing.T) {
	r := NewRegistry()
	calls := r.Counter("t_calls_total", "Calls, by tool and server.", "tool", "server")
	r.Counter("t_unused_total", "Never counted.", "server")
	lat := r.Histogram("t_seconds", "Latency\\of a \"call\"\nsecond line.", []float64{0.005, 0.5, 1, 3600}, "server")
	g := r.Gauge("t_in_flight", "In flight.").With()
	r.GaugeFunc("t_up", "Up.", []string{"server"}, func(emit Emit) {
		emit(1, "b")
		emit(0, "a")
	})
	r.GaugeFunc("t_none", "Nothing to say.", nil, func(Emit) {})

	calls.With("echo", "demo").Inc()
	for range 1_000_000 {
		calls.With("a\"b\\c\nd", "demo").Inc()
	}
	calls.With("bad\xffutf8", "aaa").Inc()
	lat.With("demo").Observe(0.003)
	lat.With("demo").Observe(0.5)
	lat.With("demo").Observe(7200)
	g.Inc()
	g.Inc()
	g.Dec()

	want := `# HELP t_calls_total Calls, by tool and server.
# TYPE t_calls_total counter
t_calls_total{server="aaa",tool="bad` + "\uFFFD" + `utf8"} 1
t_calls_total{server="demo",tool="a\"b\\c\nd"} 1e+06
t_calls_total{server="demo",tool="echo"} 1
# HELP t_in_flight In flight.
# TYPE t_in_flight gauge
t_in_flight 1
# HELP t_seconds Latency\\of a "call"\nsecond line.
# TYPE t_seconds histogram
t_seconds_bucket{server="demo",le="0.005"} 1
t_seconds_bucket{server="demo",le="0.5"} 2
t_seconds_bucket{server="demo",le="1"} 2
t_seconds_bucket{server="demo",le="3600"} 2
t_seconds_bucket{server="demo",le="+Inf"} 3
t_seconds_sum{server="demo"} 7200.503
t_seconds_count{server="demo"} 3
# HELP t_up Up.
# TYPE t_up gauge
t_up{server="a"} 0
t_up{server="b"} 1
`
	if got := page(t, r); got != want {
		t.Errorf("page:\n%s\nwant:\n%s", got, want)
	}
}

// TestRegisterTwice: a second family of one name is the caller's bug.
func TestRegisterTwice(t *testing.T) {
	r := NewRegistry()
	r.Counter("x_total", "X.")
	defer func() {
		if recover() == nil {
			t.Error("registering x_total twice did not panic")
		}
	}()
	r.Gauge("x_total", "X again.")
}

// TestConcurrent: counts from many goroutines, with scrapes among them,
// add up exactly (go test -race checks the rest).
func TestConcurrent(t *testing.T) {
	r := NewRegistry()
	c := r.Counter("c_total", "C.", "server")
	h := r.Histogram("h_seconds", "H.", []float64{1}, "server")
	const workers, each = 8, 2000
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			server := []string{"a", "b"}[w%2]
			for range each {
				c.With(server).Inc()
				h.With(server).Observe(0.5)
			}
		})
	}
	wg.Go(func() {
		for range 20 {
			page(t, r)
		}
	})
	wg.Wait()
	p := page(t, r)
	for _, want := range []string{
		`c_total{server="a"} 8000`, `c_total{server="b"} 8000`,
		`h_seconds_bucket{server="a",le="1"} 8000`, `h_seconds_sum{server="b"} 4000`, `h_seconds_count{server="b"} 8000`,
	} {
		if !strings.Contains(p, want+"\n") {
			t.Errorf("page lacks %q:\n%s", want, p)
		}
	}
}

// TestHandler: the page's media type, and gzip for a scraper that asks.
func TestHandler(t *testing.T) {
	r := NewRegistry()
	r.Counter("c_total", "C.").With().Inc()
	for _, c := range []struct {
		accept string
		gzip   bool
	}{{"", false}, {"gzip", true}, {"deflate, gzip;q=0.5", true}, {"gzip;q=0", false}, {"identity", false}} {
		req := httptest.NewRequest("GET", "/metrics", nil)
		req.Header.Set("Accept-Encoding", c.accept)
		rec := httptest.NewRecorder()
		r.Handler().ServeHTTP(rec, req)
		resp := rec.Result()
		if ct := resp.Header.Get("Content-Type"); ct != ContentType {
			t.Errorf("Content-Type %q", ct)
		}
		body := io.Reader(resp.Body)
		if got := resp.Header.Get("Content-Encoding") == "gzip"; got != c.gzip {
			t.Errorf("Accept-Encoding %q: gzipped %v, want %v", c.accept, got, c.gzip)
		} else if got {
			zr, err := gzip.NewReader(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			body = zr
		}
		b, _ := io.ReadAll(body)
		if !strings.Contains(string(b), "c_total 1\n") {
			t.Errorf("Accept-Encoding %q: body %q", c.accept, b)
		}
	}
}

// TestFloat: the forms the text format's readers expect.
func TestFloat(t *testing.T) {
	for _, c := range []struct {
		f    float64
		want string
	}{{0, "0"}, {1, "1"}, {-1, "-1"}, {0.005, "0.005"}, {1e6, "1e+06"}, {1.5e-7, "1.5e-07"},
		{math.Inf(1), "+Inf"}, {math.Inf(-1), "-Inf"}, {math.NaN(), "NaN"}, {math.MaxUint64, "1.8446744073709552e+19"}} {
		var b bytes.Buffer
		float(&b, c.f)
		if b.String() != c.want {
			t.Errorf("float(%v) = %q, want %q", c.f, b.String(), c.want)
		}
	}
}
