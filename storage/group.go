package storage

import (
	"context"
	"fmt"
)

// TableMutations is one table's part of a write to several tables
// (ApplyGroup).
type TableMutations struct {
	Table Table
	Muts  []Mutation
}

// GroupApplier is implemented by the tables of an engine that writes
// mutations to several tables of one store in one commit: one log write
// and one sync, where an Apply per table costs one each.
type GroupApplier interface {
	// ApplyGroup writes each group's mutations to its table in one
	// commit when every group's Table is a table of the receiver's store
	// as that store returned it; else it writes nothing and returns
	// false. A mutation that fails validation fails the call before
	// anything is written. Each row is atomic, as in Apply; callers may
	// not rely on more.
	ApplyGroup(ctx context.Context, groups []TableMutations) (bool, error)
}

// ApplyGroup writes groups: in one commit when the first group's table
// implements GroupApplier and takes them all, else with one Apply per
// group in order, stopping at the first error. Each row is atomic, as in
// Apply; the whole is not promised. Groups without mutations are skipped.
func ApplyGroup(ctx context.Context, groups []TableMutations) error {
	if len(groups) == 0 {
		return nil
	}
	if g, ok := groups[0].Table.(GroupApplier); ok {
		done, err := g.ApplyGroup(ctx, groups)
		if done || err != nil {
			return err
		}
	}
	for _, g := range groups {
		if len(g.Muts) == 0 {
			continue
		}
		if err := g.Table.Apply(ctx, g.Muts); err != nil {
			return fmt.Errorf("write %s: %w", g.Table.Spec().Name, err)
		}
	}
	return nil
}
