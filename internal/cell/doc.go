// Package cell is the one cell type of tsd's wide-column store, shared by
// the storage contract (storage.Cell) and the data table's codec
// (rowkey.Cell, which reads the qualifier, value and timestamp). Both
// packages alias this type, so the cells of a row a scan returns go to
// rowkey's decoders as they are, with no copy and no conversion, while
// rowkey stays a pure codec that does not import storage and storage
// knows nothing of time series.
package cell
