package telnet

import (
	"bytes"
	"strconv"
)

// Command is a telnet command.
type Command uint8

// The commands OpenTSDB 2.4 registers (RpcManager); Unknown is any other
// first word, an empty line included.
const (
	Unknown Command = iota
	Put
	Rollup
	Histogram
	Stats
	Version
	Help
	DropCaches
	Exit
	DieDieDie
)

var commandNames = [...]string{"", "put", "rollup", "histogram", "stats", "version", "help", "dropcaches", "exit", "diediedie"}

// String returns the command's name as typed ("" for Unknown).
func (c Command) String() string {
	if int(c) < len(commandNames) {
		return commandNames[c]
	}
	return ""
}

// SplitCommand returns a line's command and its first word, the name as
// typed (command names are case-sensitive, as in OpenTSDB). The word
// aliases line.
func SplitCommand(line []byte) (Command, []byte) {
	if len(line) > 3 && line[3] == ' ' && string(line[:3]) == "put" {
		return Put, line[:3] // nearly every line
	}
	name := line
	if i := bytes.IndexByte(line, ' '); i >= 0 {
		name = line[:i]
	}
	for c := Put; c <= DieDieDie; c++ {
		if string(name) == commandNames[c] {
			return c, name
		}
	}
	return Unknown, name
}

// UnknownCommand returns OpenTSDB's reply to an unknown command, without
// its "\n": "unknown command: <name>.  Try `help'."
func UnknownCommand(name []byte) string {
	return "unknown command: " + string(name) + ".  Try `help'."
}

// DefaultMaxLineBytes is tsd's telnet line limit (64 KiB; OpenTSDB's is
// 1,024 bytes). Read lines with parse.LineReader.ResetReader(conn,
// DefaultMaxLineBytes): a longer line comes back TooLong, its rest skipped.
const DefaultMaxLineBytes = 64 << 10

// LineTooLong returns the reply to a line over the limit, without its
// "\n": "line too long: more than 65536 bytes".
func LineTooLong(max int) string {
	return "line too long: more than " + strconv.Itoa(max) + " bytes"
}
