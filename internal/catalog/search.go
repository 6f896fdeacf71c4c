package catalog

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"unicode"
)

// Search ranks tools by how well they match the words of query: a word equal
// to a part of the tool's name counts most, then a part of its name, then a
// word of its title or description, then its server's name. An empty query
// matches every tool. At most limit tools are returned (limit <= 0: all).
func (s *Snapshot) Search(query string, limit int) []*Tool {
	out, _ := s.search(context.Background(), words(query), limit)
	return out
}

// Bounds of the queries SearchContext takes: what it costs grows with the
// words of the query times the tools.
const (
	MaxQueryBytes = 1024
	MaxQueryWords = 32
)

// SearchContext is Search for a query from anyone: a query longer than
// MaxQueryBytes or of more than MaxQueryWords words is an error that
// names the bound, and the search ends with ctx's cause when ctx ends.
func (s *Snapshot) SearchContext(ctx context.Context, query string, limit int) ([]*Tool, error) {
	if len(query) > MaxQueryBytes {
		return nil, fmt.Errorf("the query is %d bytes, past the limit of %d", len(query), MaxQueryBytes)
	}
	terms := words(query)
	if len(terms) > MaxQueryWords {
		return nil, fmt.Errorf("the query has %d words, past the limit of %d", len(terms), MaxQueryWords)
	}
	return s.search(ctx, terms, limit)
}

func (s *Snapshot) search(ctx context.Context, terms []string, limit int) ([]*Tool, error) {
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	type scored struct {
		t     *Tool
		score int
	}
	var hits []scored
	for i, t := range s.Tools {
		if i%64 == 0 && ctx.Err() != nil { // nothing is searched after it ends
			return nil, context.Cause(ctx)
		}
		score := 0
		if len(terms) == 0 {
			score = 1
		}
		nameWords := words(t.Tool)
		text := words(t.Title + " " + t.Description)
		for _, term := range terms {
			switch {
			case contains(nameWords, term) || strings.EqualFold(t.Tool, term) || strings.EqualFold(t.Name, term):
				score += 8
			case strings.Contains(strings.ToLower(t.Name), term):
				score += 4
			case contains(text, term):
				score += 2
			case prefixOfAny(text, term):
				score++
			case strings.EqualFold(t.Server, term):
				score++
			}
		}
		if score > 0 {
			hits = append(hits, scored{t, score})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].score > hits[j].score })
	if limit > 0 && len(hits) > limit {
		hits = hits[:limit]
	}
	out := make([]*Tool, len(hits))
	for i, h := range hits {
		out[i] = h.t
	}
	return out, nil
}

// words splits s into lower-case words at anything but letters and digits,
// and at camelCase boundaries.
func words(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	var prev rune
	for _, r := range s {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
		prev = r
	}
	flush()
	return out
}

func contains(list []string, w string) bool {
	for _, x := range list {
		if x == w {
			return true
		}
	}
	return false
}

func prefixOfAny(list []string, w string) bool {
	if len(w) < 3 {
		return false
	}
	for _, x := range list {
		if strings.HasPrefix(x, w) {
			return true
		}
	}
	return false
}
