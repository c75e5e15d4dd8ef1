package storagetest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tsd-db/tsd/storage"
)

func (s *suite) incrementCases() []testCase {
	return []testCase{
		{"New", s.testIncrementNew},
		{"Existing", s.testIncrementExisting},
		{"Negative", s.testIncrementNegative},
		{"NotEightBytes", s.testIncrementNotEightBytes},
		{"OverFutureTimestamp", s.testIncrementFuture},
		{"Concurrent", s.testIncrementConcurrent},
	}
}

func (s *suite) checkAndPutCases() []testCase {
	return []testCase{
		{"AbsentExpected", s.testCASAbsent},
		{"EmptyExpected", s.testCASEmpty},
		{"MatchAndMismatch", s.testCASMatch},
		{"NewestVersion", s.testCASNewest},
		{"NoCells", s.testCASNoCells},
		{"Race", s.testCASRace},
		{"Counter", s.testCASCounter},
	}
}

func (s *suite) appendCases() []testCase {
	return []testCase{
		{"CreatesAndAppends", s.testAppend},
		{"OverFutureTimestamp", s.testAppendFuture},
		{"Concurrent", s.testAppendConcurrent},
	}
}

func be64(n int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(n)) }

func mustIncrement(t *testing.T, tbl storage.Table, row, fam, q string, delta, want int64) {
	t.Helper()
	n, err := tbl.Increment(t.Context(), []byte(row), fam, []byte(q), delta)
	if err != nil || n != want {
		t.Fatalf("Increment(%q, %s:%q, %d) = %d, %v; want %d", row, fam, q, delta, n, err, want)
	}
}

// wantValue checks the newest value of a column.
func wantValue(t *testing.T, tbl storage.Table, row, fam, q string, want []byte) {
	t.Helper()
	cells := mustGet(t, tbl, row, &storage.ReadOptions{Families: []string{fam}, Qualifiers: [][]byte{[]byte(q)}, MaxVersions: 1})
	if len(cells) != 1 || !bytes.Equal(cells[0].Value, want) {
		t.Fatalf("value of %q %s:%q = %s; want %q", row, fam, q, fmtCells(cells), want)
	}
}

func (s *suite) testIncrementNew(t *testing.T) {
	tbl := s.std(t)
	mustIncrement(t, tbl, "r", famC, "n", 5, 5)
	mustIncrement(t, tbl, "r", famA, "n", 0, 0)
	wantValue(t, tbl, "r", famC, "n", be64(5))
	wantValue(t, tbl, "r", famA, "n", be64(0))
	mustIncrement(t, tbl, "r\x00", famC, "", 1, 1)
}

func (s *suite) testIncrementExisting(t *testing.T) {
	tbl := s.std(t)
	mustPut(t, tbl, "r", storage.Cell{Family: famC, Qualifier: []byte("n"), Timestamp: ms(1), Value: be64(40)})
	mustIncrement(t, tbl, "r", famC, "n", 2, 42)
	mustIncrement(t, tbl, "r", famC, "n", 1<<40, 42+1<<40)
	wantValue(t, tbl, "r", famC, "n", be64(42+1<<40))
	mustPut(t, tbl, "r", storage.Cell{Family: famC, Qualifier: []byte("n"), Value: be64(7)})
	mustIncrement(t, tbl, "r", famC, "n", 1, 8)
}

func (s *suite) testIncrementNegative(t *testing.T) {
	tbl := s.std(t)
	mustIncrement(t, tbl, "r", famC, "n", -3, -3)
	mustIncrement(t, tbl, "r", famC, "n", 1, -2)
	wantValue(t, tbl, "r", famC, "n", be64(-2))
	mustIncrement(t, tbl, "r", famC, "n", 5, 3)
}

func (s *suite) testIncrementNotEightBytes(t *testing.T) {
	tbl := s.std(t)
	for _, v := range []string{"", "1234567", "123456789", "x"} {
		q := fmt.Sprintf("q%d", len(v))
		mustPut(t, tbl, "r", cell(famC, q, ms(1), v))
		n, err := tbl.Increment(t.Context(), []byte("r"), famC, []byte(q), 1)
		wantErr(t, fmt.Sprintf("Increment over %d bytes (returned %d)", len(v), n), err, storage.ErrInvalidArgument)
		wantValue(t, tbl, "r", famC, q, []byte(v))
	}
}

func (s *suite) testIncrementConcurrent(t *testing.T) {
	tbl := s.std(t)
	g, per := s.opts.Goroutines, s.opts.OpsPerGoroutine
	results := make([][]int64, g)
	errs := make(chan error, g)
	var wg sync.WaitGroup
	for i := range g {
		wg.Go(func() {
			for range per {
				n, err := tbl.Increment(t.Context(), []byte("ctr"), famC, []byte("n"), 1)
				if err != nil {
					errs <- err
					return
				}
				results[i] = append(results[i], n)
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		t.Fatalf("concurrent Increment: %v", err)
	}
	all := slices.Concat(results...)
	slices.Sort(all)
	for i, n := range all {
		if n != int64(i+1) {
			t.Fatalf("%d goroutines x %d increments returned %d values; sorted value %d is %d, want %d (lost or duplicated)",
				g, per, len(all), i, n, i+1)
		}
	}
	wantValue(t, tbl, "ctr", famC, "n", be64(int64(g*per)))
}

func (s *suite) testCASAbsent(t *testing.T) {
	tbl := s.std(t)
	ctx := t.Context()
	put := []storage.Cell{cell(famA, "q", ms(1), "first"), cell(famB, "other", ms(1), "o")}
	if err := tbl.CheckAndPut(ctx, []byte("r"), famA, []byte("q"), nil, put); err != nil {
		t.Fatalf("CheckAndPut absent on a missing column: %v", err)
	}
	wantGet(t, tbl, "r", nil, rc("r", famA, "q", ms(1), "first"), rc("r", famB, "other", ms(1), "o"))
	err := tbl.CheckAndPut(ctx, []byte("r"), famA, []byte("q"), nil, []storage.Cell{cell(famA, "q", ms(2), "second")})
	wantErr(t, "CheckAndPut absent on a present column", err, storage.ErrConflict)
	// The absent check is per column: another qualifier in the row is absent.
	if err := tbl.CheckAndPut(ctx, []byte("r"), famA, []byte("q2"), nil, []storage.Cell{cell(famA, "q2", ms(1), "x")}); err != nil {
		t.Fatalf("CheckAndPut absent on a missing column of a present row: %v", err)
	}
	wantValue(t, tbl, "r", famA, "q", []byte("first"))
}

func (s *suite) testCASEmpty(t *testing.T) {
	tbl := s.std(t)
	ctx := t.Context()
	err := tbl.CheckAndPut(ctx, []byte("r"), famA, []byte("q"), []byte{}, []storage.Cell{cell(famA, "q", ms(1), "x")})
	wantErr(t, "CheckAndPut empty on an absent column", err, storage.ErrConflict)
	wantGet(t, tbl, "r", nil)
	mustPut(t, tbl, "r", cell(famA, "q", ms(1), ""))
	err = tbl.CheckAndPut(ctx, []byte("r"), famA, []byte("q"), nil, []storage.Cell{cell(famA, "q", ms(2), "x")})
	wantErr(t, "CheckAndPut absent on a present empty column", err, storage.ErrConflict)
	if err := tbl.CheckAndPut(ctx, []byte("r"), famA, []byte("q"), []byte{}, []storage.Cell{cell(famA, "q", ms(2), "x")}); err != nil {
		t.Fatalf("CheckAndPut empty on a present empty column: %v", err)
	}
	wantValue(t, tbl, "r", famA, "q", []byte("x"))
}

func (s *suite) testCASMatch(t *testing.T) {
	tbl := s.std(t)
	ctx := t.Context()
	mustPut(t, tbl, "r", cell(famC, "lock", ms(1), "v1"))
	err := tbl.CheckAndPut(ctx, []byte("r"), famC, []byte("lock"), []byte("v0"),
		[]storage.Cell{cell(famC, "lock", ms(2), "bad"), cell(famA, "side", ms(1), "bad")})
	wantErr(t, "CheckAndPut mismatch", err, storage.ErrConflict)
	wantGet(t, tbl, "r", nil, rc("r", famC, "lock", ms(1), "v1"))
	err = tbl.CheckAndPut(ctx, []byte("r"), famC, []byte("lock"), []byte("v1"),
		[]storage.Cell{cell(famC, "lock", ms(2), "v2"), cell(famA, "side", ms(1), "ok")})
	if err != nil {
		t.Fatalf("CheckAndPut match: %v", err)
	}
	wantGet(t, tbl, "r", nil, rc("r", famA, "side", ms(1), "ok"), rc("r", famC, "lock", ms(2), "v2"))
	// A prefix of the value is not a match.
	err = tbl.CheckAndPut(ctx, []byte("r"), famC, []byte("lock"), []byte("v"), []storage.Cell{cell(famC, "lock", ms(3), "v3")})
	wantErr(t, "CheckAndPut with a prefix of the value", err, storage.ErrConflict)
}

func (s *suite) testCASNewest(t *testing.T) {
	tbl := s.std(t)
	ctx := t.Context()
	mustPut(t, tbl, "r", cell(famA, "q", ms(1), "old"), cell(famA, "q", ms(5), "new"), cell(famA, "q", ms(3), "mid"))
	err := tbl.CheckAndPut(ctx, []byte("r"), famA, []byte("q"), []byte("old"), []storage.Cell{cell(famA, "w", ms(1), "x")})
	wantErr(t, "CheckAndPut against an older version", err, storage.ErrConflict)
	if err := tbl.CheckAndPut(ctx, []byte("r"), famA, []byte("q"), []byte("new"), []storage.Cell{cell(famA, "w", ms(1), "x")}); err != nil {
		t.Fatalf("CheckAndPut against the newest version: %v", err)
	}
	wantValue(t, tbl, "r", famA, "w", []byte("x"))
}

// testCASRace lets 2*Goroutines goroutines race to claim absent cells.
func (s *suite) testCASRace(t *testing.T) {
	tbl := s.std(t)
	g := 2 * s.opts.Goroutines
	for round := range 5 {
		row := []byte(fmt.Sprintf("race%d", round))
		errs := make([]error, g)
		var wg sync.WaitGroup
		for i := range g {
			wg.Go(func() {
				id := fmt.Sprintf("id%02d", i)
				errs[i] = tbl.CheckAndPut(t.Context(), row, famC, []byte("owner"), nil,
					[]storage.Cell{cell(famC, "owner", 0, id), cell(famA, id, ms(1), id)})
			})
		}
		wg.Wait()
		winner := -1
		for i, err := range errs {
			switch {
			case err == nil && winner >= 0:
				t.Fatalf("round %d: goroutines %d and %d both won", round, winner, i)
			case err == nil:
				winner = i
			case !errors.Is(err, storage.ErrConflict):
				t.Fatalf("round %d: goroutine %d: %v; want nil or ErrConflict", round, i, err)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: no goroutine won", round)
		}
		id := fmt.Sprintf("id%02d", winner)
		wantValue(t, tbl, string(row), famC, "owner", []byte(id))
		wantGet(t, tbl, string(row), &storage.ReadOptions{Families: []string{famA}}, rc(string(row), famA, id, ms(1), id))
	}
}

// testCASCounter counts with read, CheckAndPut, retry loops.
func (s *suite) testCASCounter(t *testing.T) {
	tbl := s.std(t)
	g, per := s.opts.Goroutines, max(1, s.opts.OpsPerGoroutine/8)
	errs := make(chan error, g)
	var wg sync.WaitGroup
	for range g {
		wg.Go(func() {
			for range per {
				if err := casIncrement(t, tbl); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	wantValue(t, tbl, "cas", famC, "n", be64(int64(g*per)))
}

func casIncrement(t *testing.T, tbl storage.Table) error {
	for {
		var old []byte
		cells, err := tbl.Get(t.Context(), []byte("cas"), &storage.ReadOptions{Families: []string{famC}})
		switch {
		case err == nil:
			old = cells[0].Value
		case !errors.Is(err, storage.ErrNotFound):
			return err
		}
		var n int64
		if old != nil {
			n = int64(binary.BigEndian.Uint64(old))
		}
		err = tbl.CheckAndPut(t.Context(), []byte("cas"), famC, []byte("n"), old,
			[]storage.Cell{{Family: famC, Qualifier: []byte("n"), Value: be64(n + 1)}})
		if !errors.Is(err, storage.ErrConflict) {
			return err
		}
	}
}

func (s *suite) testAppend(t *testing.T) {
	tbl := s.std(t)
	ctx := t.Context()
	for i, want := range []string{"ab", "abcd", "abcd", "abcd\x00\xff"} {
		piece := []string{"ab", "cd", "", "\x00\xff"}[i]
		v, err := tbl.Append(ctx, []byte("r"), famC, []byte("log"), []byte(piece))
		if err != nil || string(v) != want {
			t.Fatalf("Append(%q) = %q, %v; want %q", piece, v, err, want)
		}
	}
	wantValue(t, tbl, "r", famC, "log", []byte("abcd\x00\xff"))
	mustPut(t, tbl, "r", cell(famA, "p", ms(1), "old"), cell(famA, "p", ms(2), "new"))
	v, err := tbl.Append(ctx, []byte("r"), famA, []byte("p"), []byte("+"))
	if err != nil || string(v) != "new+" {
		t.Fatalf("Append onto versions = %q, %v; want the newest extended: \"new+\"", v, err)
	}
	wantValue(t, tbl, "r", famA, "p", []byte("new+"))
	v, err = tbl.Append(ctx, []byte("r"), famC, []byte(""), nil)
	if err != nil || len(v) != 0 {
		t.Fatalf("Append of nothing to an absent column = %q, %v; want empty", v, err)
	}
}

func (s *suite) testAppendConcurrent(t *testing.T) {
	tbl := s.std(t)
	g, per := s.opts.Goroutines, max(1, s.opts.OpsPerGoroutine/4)
	errs := make(chan error, g)
	var wg sync.WaitGroup
	for i := range g {
		wg.Go(func() {
			for j := range per {
				if _, err := tbl.Append(t.Context(), []byte("r"), famC, []byte("log"), []byte(fmt.Sprintf("%02d%04d;", i, j))); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		t.Fatalf("concurrent Append: %v", err)
	}
	cells := mustGet(t, tbl, "r", nil)
	pieces := bytes.Split(bytes.TrimSuffix(cells[0].Value, []byte(";")), []byte(";"))
	seen := make(map[string]bool)
	for _, p := range pieces {
		seen[string(p)] = true
	}
	if len(pieces) != g*per || len(seen) != g*per {
		t.Fatalf("after %d appends: %d pieces, %d distinct", g*per, len(pieces), len(seen))
	}
}

// testIncrementFuture increments a counter stamped ahead of the clock: the
// result must become the newest version (Bigtable stamps it with the later
// of now and the old cell's time), or the next increment reads the old value
// again and an increment is lost.
func (s *suite) testIncrementFuture(t *testing.T) {
	tbl := s.std(t)
	future := s.nowMicros() + time.Hour.Microseconds()
	mustPut(t, tbl, "r", storage.Cell{Family: famA, Qualifier: []byte("n"), Timestamp: future, Value: be64(10)})
	mustIncrement(t, tbl, "r", famA, "n", 1, 11)
	mustIncrement(t, tbl, "r", famA, "n", 1, 12)
	wantValue(t, tbl, "r", famA, "n", be64(12))
}

func (s *suite) testAppendFuture(t *testing.T) {
	tbl := s.std(t)
	future := s.nowMicros() + time.Hour.Microseconds()
	mustPut(t, tbl, "r", cell(famA, "log", future, "a"))
	for _, want := range []string{"ab", "abb"} {
		v, err := tbl.Append(t.Context(), []byte("r"), famA, []byte("log"), []byte("b"))
		if err != nil || string(v) != want {
			t.Fatalf("Append over a future-stamped cell = %q, %v; want %q", v, err, want)
		}
	}
	wantValue(t, tbl, "r", famA, "log", []byte("abb"))
}

// testCASNoCells uses CheckAndPut as a pure check.
func (s *suite) testCASNoCells(t *testing.T) {
	tbl := s.std(t)
	ctx := t.Context()
	if err := tbl.CheckAndPut(ctx, []byte("r"), famA, []byte("q"), nil, nil); err != nil {
		t.Fatalf("CheckAndPut absent with no cells: %v", err)
	}
	wantGet(t, tbl, "r", nil)
	mustPut(t, tbl, "r", cell(famA, "q", ms(1), "v"))
	wantErr(t, "CheckAndPut absent with no cells on a present column", tbl.CheckAndPut(ctx, []byte("r"), famA, []byte("q"), nil, nil), storage.ErrConflict)
	if err := tbl.CheckAndPut(ctx, []byte("r"), famA, []byte("q"), []byte("v"), nil); err != nil {
		t.Fatalf("CheckAndPut match with no cells: %v", err)
	}
	wantGet(t, tbl, "r", nil, rc("r", famA, "q", ms(1), "v"))
}
