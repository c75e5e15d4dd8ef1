// Package jackson writes JSON strings byte for byte as OpenTSDB's Jackson
// writer does, for the answers that echo OpenTSDB's own serialisation
// (annotations, /api/put's details).
//
// # Format
//
// A string is written between double quotes. " and \ are escaped with a
// backslash; \b, \t, \n, \f and \r take their short forms; every other
// byte below 0x20 is \u00XX with upper-case hex digits; 0x7F and all
// non-ASCII text are written as they are, in UTF-8. Invalid UTF-8, which
// Jackson could not have read, becomes U+FFFD, so the output is always
// valid JSON.
package jackson
