package uid

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Error classes; test with errors.Is.
var (
	// ErrNoSuchName: the name has no UID of that kind (and was not created).
	ErrNoSuchName = errors.New("uid: no such name")
	// ErrNoSuchID: the UID has no name of that kind.
	ErrNoSuchID = errors.New("uid: no such unique id")
	// ErrExhausted: every UID of the kind's width is taken.
	ErrExhausted = errors.New("uid: unique ids exhausted")
	// ErrInvalidName: a name breaks the naming rules.
	ErrInvalidName = errors.New("uid: invalid name")
	// ErrNotLatin1: a name cannot be stored in an opentsdb-format table.
	ErrNotLatin1 = errors.New("uid: name not representable in Latin-1")
	// ErrDuplicateTag: a point names one tag key twice.
	ErrDuplicateTag = errors.New("uid: duplicate tag key")
	// ErrNameExists: a rename target already has a UID.
	ErrNameExists = errors.New("uid: name already exists")
)

// NoSuchNameError is OpenTSDB's NoSuchUniqueName.
type NoSuchNameError struct {
	Kind Kind
	Name string
}

// Error returns OpenTSDB's text: No such name for 'metrics': 'new.metric'.
func (e *NoSuchNameError) Error() string {
	return "No such name for '" + e.Kind.String() + "': '" + e.Name + "'"
}

// Is makes errors.Is(err, ErrNoSuchName) hold.
func (e *NoSuchNameError) Is(target error) bool { return target == ErrNoSuchName }

// NoSuchIDError is OpenTSDB's NoSuchUniqueId.
type NoSuchIDError struct {
	Kind Kind
	ID   []byte
}

// Error returns OpenTSDB's text: No such unique ID for 'metrics': [0, 0, 1].
func (e *NoSuchIDError) Error() string {
	return "No such unique ID for '" + e.Kind.String() + "': " + javaBytes(e.ID)
}

// Is makes errors.Is(err, ErrNoSuchID) hold.
func (e *NoSuchIDError) Is(target error) bool { return target == ErrNoSuchID }

// ExhaustedError says every UID of a kind's width is assigned.
type ExhaustedError struct {
	Kind  Kind
	Width int
}

// Error returns OpenTSDB's text.
func (e *ExhaustedError) Error() string {
	return fmt.Sprintf("All Unique IDs for %s on %d bytes are already assigned!", e.Kind, e.Width)
}

// Is makes errors.Is(err, ErrExhausted) hold.
func (e *ExhaustedError) Is(target error) bool { return target == ErrExhausted }

// NameError is a name that breaks the rules of a Validator.
type NameError struct {
	Kind Kind
	Name string
	// Char is the first offending character; meaningless when Empty or
	// BadUTF8.
	Char rune
	// Empty says the name is empty.
	Empty bool
	// BadUTF8 says the name is not valid UTF-8.
	BadUTF8 bool
}

// Error follows OpenTSDB's Tags.validateString wording:
// Invalid metric name ("x!"): illegal character: !
func (e *NameError) Error() string {
	what := "name"
	if e.Kind.Valid() {
		what = e.Kind.what()
	}
	switch {
	case e.Empty:
		return "Invalid " + what + ": empty string"
	case e.BadUTF8:
		return "Invalid " + what + " (" + quoteName(e.Name) + "): not valid UTF-8"
	}
	c := string(e.Char)
	if !unicode.IsGraphic(e.Char) || e.Char == ' ' {
		c = fmt.Sprintf("%U", e.Char)
	}
	return "Invalid " + what + " (" + quoteName(e.Name) + "): illegal character: " + c
}

// Is makes errors.Is(err, ErrInvalidName) hold.
func (e *NameError) Is(target error) bool { return target == ErrInvalidName }

// quoteName quotes like OpenTSDB ("name") unless the name holds characters a
// log line should not carry raw, then Go-quotes it.
func quoteName(s string) string {
	if !utf8.ValidString(s) {
		return strconv.Quote(s)
	}
	for _, r := range s {
		if !unicode.IsGraphic(r) {
			return strconv.Quote(s)
		}
	}
	return `"` + s + `"`
}

// javaBytes formats b as Java's Arrays.toString of a byte[] (signed bytes),
// the form OpenTSDB prints UIDs in: [0, 3, -67].
func javaBytes(b []byte) string {
	var sb strings.Builder
	sb.WriteByte('[')
	for i, c := range b {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(strconv.Itoa(int(int8(c))))
	}
	sb.WriteByte(']')
	return sb.String()
}
