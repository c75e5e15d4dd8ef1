package uid

import (
	"unicode"
	"unicode/utf8"
)

// Rules selects which names a Validator accepts.
type Rules uint8

const (
	// RulesOpenTSDB are OpenTSDB's rules (Tags.validateString), for the
	// telnet and /api/put paths: a-z A-Z 0-9 - _ . / , unicode letters, and
	// the characters of tsd.core.tag.allow_specialchars.
	RulesOpenTSDB Rules = iota
	// RulesLossless accept any printable UTF-8 (every character graphic,
	// spaces included), for Prometheus remote_write and Influx line
	// protocol, whose names must come back exactly.
	RulesLossless
)

// Validator checks names before they reach the UID table. Both rule sets
// refuse empty names. A Validator is immutable and safe for concurrent use.
type Validator struct {
	rules      Rules
	asciiExtra [utf8.RuneSelf]bool
	extra      []rune // non-ASCII allow_specialchars
}

// NewValidator returns a Validator for rules. allowSpecialChars lists extra
// characters RulesOpenTSDB accepts (tsd.core.tag.allow_specialchars);
// RulesLossless ignores it.
func NewValidator(rules Rules, allowSpecialChars string) *Validator {
	v := &Validator{rules: rules}
	for _, r := range allowSpecialChars {
		if r < utf8.RuneSelf {
			v.asciiExtra[r] = true
		} else {
			v.extra = append(v.extra, r)
		}
	}
	return v
}

// Validate returns a *NameError (ErrInvalidName) naming the first illegal
// character of name, or nil.
func (v *Validator) Validate(kind Kind, name []byte) error {
	if len(name) == 0 {
		return &NameError{Kind: kind, Empty: true}
	}
	for i := 0; i < len(name); {
		c := name[i]
		if c < utf8.RuneSelf {
			if !v.asciiOK(c) {
				return &NameError{Kind: kind, Name: string(name), Char: rune(c)}
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(name[i:])
		if r == utf8.RuneError && n == 1 {
			return &NameError{Kind: kind, Name: string(name), BadUTF8: true}
		}
		if !v.runeOK(r) {
			return &NameError{Kind: kind, Name: string(name), Char: r}
		}
		i += n
	}
	return nil
}

// ValidateString is Validate for a string.
func (v *Validator) ValidateString(kind Kind, name string) error {
	return v.Validate(kind, []byte(name))
}

func (v *Validator) asciiOK(c byte) bool {
	if v.rules == RulesLossless {
		return c >= ' ' && c < 0x7F
	}
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	case c == '-', c == '_', c == '.', c == '/':
		return true
	}
	return v.asciiExtra[c]
}

func (v *Validator) runeOK(r rune) bool {
	if v.rules == RulesLossless {
		return unicode.IsGraphic(r)
	}
	if unicode.IsLetter(r) {
		return true
	}
	for _, x := range v.extra {
		if x == r {
			return true
		}
	}
	return false
}

// storedRules guard the table itself: whatever path a name came from, the
// UID table only ever holds names RulesLossless accepts.
var storedRules = NewValidator(RulesLossless, "")
