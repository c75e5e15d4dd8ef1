// Package tree is OpenTSDB 2.4's trees: rule sets that file every series
// (its TSMeta) under a hierarchy of branches browsable like a file system,
// stored in a tree table laid out byte for byte as OpenTSDB lays out
// tsdb-tree, so a store shared with OpenTSDB reads the same trees.
//
// The package is pure logic and storage rows: a Store reads and writes the
// table, a Builder runs one tree's rules over one series' Meta, and a
// Processor runs every enabled tree over new series off the write path.
// The callers (the HTTP API, the daemon) load a series' Meta from the
// series index and the UID table; this package knows no series format.
//
// # Table
//
// One column family, t (Family), one version per column. Tree ids are 1 to
// 65535, written as 2 bytes big-endian (IDBytes).
//
//	row                          qualifier                  value
//	id (2 B)                     tree                       the tree's JSON: name, description, notes,
//	                                                        strictMatch, created, enabled, storeFailures
//	                             tree_rule:<level>:<order>  a rule's JSON (Rule.AppendJSON), level and
//	                                                        order in decimal ASCII
//	                             branch                     the root branch: {"path":{"0":"ROOT"},"displayName":"ROOT"}
//	                             leaf:<hash (4 B)>          a leaf of the root
//	id ‖ 0x01                    tree_collision:<TSUID>     TSUID (raw bytes) that collided → the TSUID
//	                                                        already there, upper-case hex in ISO-8859-1
//	id ‖ 0x02                    tree_not_matched:<TSUID>   TSUID that failed a strict tree → the rules
//	                                                        that did not match
//	id ‖ hash₁ ‖ … ‖ hashₙ       branch                     {"path":{"0":"ROOT","1":…,"n":name},"displayName":name}
//	                             leaf:<hash (4 B)>          {"displayName":name,"tsuid":"<hex>"}
//
// A branch's row key is the tree id followed by the 4-byte big-endian Java
// String.hashCode (UTF-16 code units, h = 31h + c) of the display name of
// each branch on its path below the root, so the root of tree 1 is 0001
// and its child "sys" 00010001BECD. A leaf's qualifier is "leaf:" and the
// hash of its display name. Two leaves of one branch with one display name
// collide: the first stays and the second is recorded as a collision.
//
// Branches and leaves are written with a check-and-put expecting the
// column absent, so each is written once and concurrent builders (several
// daemons) agree; definitions and rules are replaced with a check-and-put
// against the bytes read, so concurrent edits never lose one another.
//
// # Where tsd differs from OpenTSDB
//
//   - Regular expressions (a rule's regex and separator) are Go's RE2, not
//     java.util.regex: no backreferences or lookaround.
//   - A strict tree with storeFailures records its not-matched series;
//     OpenTSDB 2.4's builder only adds to a list it never loads, so it
//     records none.
//   - A tree created from a JSON body gets its creation time (OpenTSDB's
//     stays 0).
package tree
