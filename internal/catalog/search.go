package catalog

import (
	"sort"
	"strings"
	"unicode"
)

// Search ranks tools by how well they match the words of query: a word equal
// to a part of the tool's name counts most, then a part of its name, then a
// word of its title or description, then its server's name. An empty query
// matches every tool. At most limit tools are returned (limit <= 0: all).
func (s *Snapshot) Search(query string, limit int) []*Tool {
	terms := words(query)
	type scored struct {
		t     *Tool
		score int
	}
	var hits []scored
	for _, t := range s.Tools {
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
	return out
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
