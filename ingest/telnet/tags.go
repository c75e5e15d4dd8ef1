package telnet

import (
	"bytes"

	"github.com/tsd-db/tsd/ingest/parse"
)

// tags parses the tag words of rest into pt.Tags (at most MaxTags; extra
// counts the tags beyond, which are not compared, so a hostile line stays
// linear). check reports a name byte the validator must judge. Tags equal
// to a recent line's come from the parser's memo and alias its copy of
// them, not the line.
func (p *Parser) tags(rest []byte, pt *parse.Point) (extra int, check bool, err error) {
	m := &p.memo
	e, h := m.lookup(rest)
	if e != nil {
		pt.Tags = append(pt.Tags[:0], e.tags...)
		return e.extra, e.check, nil
	}
	m.spans = m.spans[:0]
	if extra, check, err = p.scanTags(rest, pt); err == nil && len(rest) <= maxMemoBytes {
		m.remember(rest, h, extra, check)
	}
	return extra, check, err
}

// scanTags is tags without the memo; it records the kept tags' spans in
// p.memo.spans.
func (p *Parser) scanTags(rest []byte, pt *parse.Point) (extra int, check bool, err error) {
	var mask uint64
	tags := pt.Tags
	defer func() { pt.Tags = tags }()
	for i := 0; i < len(rest); {
		if rest[i] == ' ' {
			i++ // repeated spaces make empty words
			continue
		}
		start, eq, neq := i, -1, 0
	scan:
		for {
			i = p.skipPlain(rest, i)
			if i == len(rest) {
				break
			}
			switch c := p.cls[rest[i]]; {
			case c&clsSpace != 0:
				break scan
			case c&clsEqual != 0:
				if eq < 0 {
					eq = i - start
				}
				neq++
			default:
				check = true
			}
			i++
		}
		word := rest[start:i]
		if neq != 1 || eq == 0 || eq == len(word)-1 {
			return 0, false, illegal("invalid tag: " + string(word))
		}
		key, val := word[:eq], word[eq+1:]
		bit := uint64(1) << ((uint(len(key))*7 + uint(key[0])*3 + uint(key[len(key)-1])) & 63)
		if mask&bit != 0 {
			if dup, same := findTag(tags, key, val); dup {
				if same {
					continue
				}
				return 0, false, illegal("duplicate tag: " + string(word) + ", tags=" + formatParsed(tags))
			}
		}
		if len(tags) >= p.opts.MaxTags {
			extra++
			continue
		}
		mask |= bit
		tags = append(tags, parse.Tag{Key: key, Value: val})
		p.memo.spans = append(p.memo.spans, tagSpan{start, start + eq, i})
	}
	return extra, check, nil
}

// findTag reports whether key is among tags and whether its value is val.
func findTag(tags []parse.Tag, key, val []byte) (found, same bool) {
	for _, t := range tags {
		if bytes.Equal(t.Key, key) {
			return true, bytes.Equal(t.Value, val)
		}
	}
	return false, false
}

// formatParsed prints tags as Java prints the HashMap OpenTSDB holds them
// in: {k=v, k2=v2}, in the map's order.
func formatParsed(tags []parse.Tag) string {
	var scratch []int
	return string(parse.AppendJavaMap(nil, tags, &scratch))
}

// formatTags prints every well-formed tag word of rest, a repeated key
// once, as Java prints a map (for error messages).
func formatTags(rest []byte) string {
	var tags []parse.Tag
	seen := make(map[string]bool)
	for _, word := range bytes.Split(rest, []byte{' '}) {
		eq := bytes.IndexByte(word, '=')
		if eq <= 0 || eq == len(word)-1 || seen[string(word[:eq])] {
			continue
		}
		seen[string(word[:eq])] = true
		tags = append(tags, parse.Tag{Key: word[:eq], Value: word[eq+1:]})
	}
	return formatParsed(tags)
}

// skipPlain returns the index of the first byte at or after b[i] that is
// not plain (or len(b)), four bytes a step while it can.
func (p *Parser) skipPlain(b []byte, i int) int {
	cls := &p.cls
	for ; i+4 <= len(b); i += 4 {
		if cls[b[i]]|cls[b[i+1]]|cls[b[i+2]]|cls[b[i+3]] != 0 {
			break
		}
	}
	for i < len(b) && cls[b[i]] == 0 {
		i++
	}
	return i
}
