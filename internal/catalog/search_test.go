package catalog

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestWords(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"  \t ", nil},
		{"search", []string{"search"}},
		{"get_weather", []string{"get", "weather"}},
		{"getWeather", []string{"get", "weather"}},
		{"GetWeatherForecast", []string{"get", "weather", "forecast"}},
		{"read-file.v2", []string{"read", "file", "v2"}},
		{"tools/call", []string{"tools", "call"}},
		{"HTTPServer", []string{"httpserver"}}, // an acronym run stays one word
		{"parseHTTP", []string{"parse", "http"}},
		{"readFile2", []string{"read", "file2"}},
		{"2fa code", []string{"2fa", "code"}},
		{"Read a file; return its bytes!", []string{"read", "a", "file", "return", "its", "bytes"}},
		{"mcpx__search", []string{"mcpx", "search"}},
		{"Ünïcödé wörds", []string{"ünïcödé", "wörds"}},
		{"日本語テキスト", []string{"日本語テキスト"}},
		{"a--b__c", []string{"a", "b", "c"}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, words(tt.in), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("words(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func searchSnapshot() *Snapshot {
	return &Snapshot{Tools: []*Tool{
		{Name: "files__read_file", Server: "files", Tool: "read_file", Description: "Read a file. Mentions a forecast in passing."},
		{Name: "netutil__ping", Server: "netutil", Tool: "ping", Description: "Check that a host answers."},
		{Name: "weather__alerts", Server: "weather", Tool: "alerts", Title: "Alerts", Description: "Severe alerts for a region."},
		{Name: "weather__getForecast", Server: "weather", Tool: "getForecast", Description: "The forecast for a city."},
		{Name: "lookup", Server: "dns", Tool: "lookup", Description: "Resolve a name."}, // exposed bare
	}}
}

func names(tools []*Tool) []string {
	out := make([]string, len(tools))
	for i, t := range tools {
		out[i] = t.Name
	}
	return out
}

func TestSearch(t *testing.T) {
	tests := []struct {
		name  string
		query string
		limit int
		want  []string
	}{
		{
			name:  "empty query returns all, in catalog order",
			query: "", limit: 0,
			want: []string{"files__read_file", "netutil__ping", "weather__alerts", "weather__getForecast", "lookup"},
		},
		{
			name:  "punctuation only is an empty query",
			query: " ?! ", limit: 0,
			want: []string{"files__read_file", "netutil__ping", "weather__alerts", "weather__getForecast", "lookup"},
		},
		{
			name:  "empty query with a limit",
			query: "", limit: 2,
			want: []string{"files__read_file", "netutil__ping"},
		},
		{
			name:  "a name word beats a description word",
			query: "forecast",
			want:  []string{"weather__getForecast", "files__read_file"},
		},
		{
			name:  "case does not matter",
			query: "FORECAST",
			want:  []string{"weather__getForecast", "files__read_file"},
		},
		{
			name:  "limit keeps the best",
			query: "forecast", limit: 1,
			want: []string{"weather__getForecast"},
		},
		{
			name:  "part of the exposed name beats the description",
			query: "weather",
			want:  []string{"weather__alerts", "weather__getForecast"},
		},
		{
			name:  "more matching words rank higher",
			query: "read file",
			want:  []string{"files__read_file"},
		},
		{
			name:  "a description prefix of three letters or more",
			query: "answ",
			want:  []string{"netutil__ping"},
		},
		{
			name:  "a two-letter prefix is not enough",
			query: "an",
			want:  []string{},
		},
		{
			name:  "the server's name of a bare tool",
			query: "dns",
			want:  []string{"lookup"},
		},
		{
			name:  "the title counts",
			query: "alerts region",
			want:  []string{"weather__alerts"},
		},
		{
			name:  "the whole upstream name",
			query: "getforecast",
			want:  []string{"weather__getForecast"},
		},
		{
			name:  "no match",
			query: "zebra",
			want:  []string{},
		},
		{
			name:  "ties keep catalog order",
			query: "a", // part of three names (4), a description word of two (2)
			want:  []string{"files__read_file", "weather__alerts", "weather__getForecast", "netutil__ping", "lookup"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := names(searchSnapshot().Search(tt.query, tt.limit))
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Search(%q, %d) mismatch (-want +got):\n%s", tt.query, tt.limit, diff)
			}
		})
	}
}

func TestSearchRankingOrder(t *testing.T) {
	// One tool per rank, listed worst first, so that only the scores can
	// put them in order.
	s := &Snapshot{Tools: []*Tool{
		{Name: "srv_only", Server: "sync", Tool: "other"},                                    // server name: 1
		{Name: "x__prefix", Server: "x", Tool: "prefix", Description: "synchronise things"},  // description prefix: 1
		{Name: "x__desc", Server: "x", Tool: "desc", Description: "sync now"},                // description word: 2
		{Name: "x__resync_all", Server: "x", Tool: "resyncall", Description: ""},             // part of the name: 4
		{Name: "x__sync_files", Server: "x", Tool: "sync_files", Description: "no relation"}, // name word: 8
	}}
	got := names(s.Search("sync", 0))
	want := []string{"x__sync_files", "x__resync_all", "x__desc", "srv_only", "x__prefix"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ranking mismatch (-want +got):\n%s", diff)
	}
}

// TestSearchContext: a query past the bounds is refused naming them, a
// search whose context has ended ends with its cause, and a query within
// the bounds finds what Search finds.
func TestSearchContext(t *testing.T) {
	s := searchSnapshot()
	for _, tc := range []struct{ query, want string }{
		{strings.Repeat("ab ", 400), "the query is 1200 bytes, past the limit of 1024"},
		{strings.Repeat("a ", 33), "the query has 33 words, past the limit of 32"},
	} {
		if _, err := s.SearchContext(context.Background(), tc.query, 0); err == nil || err.Error() != tc.want {
			t.Errorf("query of %d bytes: %v, want %q", len(tc.query), err, tc.want)
		}
	}
	got, err := s.SearchContext(context.Background(), "forecast", 0)
	if want := names(s.Search("forecast", 0)); err != nil || !slices.Equal(names(got), want) || len(want) == 0 {
		t.Errorf("SearchContext = %v, %v; Search = %v", names(got), err, want)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	why := errors.New("the script's hard maximum was reached")
	cancel(why)
	if got, err := s.SearchContext(ctx, "forecast", 0); err != why || got != nil {
		t.Errorf("after its context ended: %v, %v; want the cause", names(got), err)
	}
}
