package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cmpd-dissect/cmpd-dissect/conn"
	"github.com/cmpd-dissect/cmpd-dissect/dissect"
	"github.com/cmpd-dissect/cmpd-dissect/export"
)

func newExportCommand() *cobra.Command {
	var (
		flags       trackFlags
		format      string
		dir         string
		packets     bool
		indexPrefix string
		groupRows   int
	)
	cmd := &cobra.Command{
		Use:   "export --format parquet|ndjson -o DIR [--packets] CAPTURE…",
		Short: "Write connections, findings and RPC calls of captures as a Parquet (or NDJSON) dataset for query engines",
		Long: `export writes what conns and the packet view find in each capture as a dataset that
DuckDB, Spark, Trino or Polars read, laid out Hive-style, one directory per capture:

  DIR/connections/capture=NAME/part-0.parquet   one row per connection (the keys of conns --json)
  DIR/findings/capture=NAME/part-0.parquet      every finding: the frames' (as -T json) and the
                                                connection analysis's (as conns --json lists them)
  DIR/rpc/capture=NAME/part-0.parquet           RPC calls with their reply frame and time
  DIR/queue_pairs/capture=NAME/part-0.parquet   the transport analysis' counters per queue pair
                                                (conns --json's queue_pairs)
  DIR/packets/capture=NAME/part-0.parquet       with --packets: one row per frame, key fields

NAME is the capture file's base name (characters other than letters, digits and "._+-" become
"_"); exporting a capture again replaces its files. Parquet files are zstd-compressed, written in
row groups as the capture is read, a new file (part-1, part-2 …) every few row groups, and a
connection is written once it is over (memory stays flat however many packets and connections;
rows come in no fixed order: sort by the key columns); every row has a schema_version column. --format ndjson writes
the same tables as part-0.ndjson, in the form Elasticsearch's bulk API takes: an action line
({"index":{"_index":"PREFIXTABLE"}}) before each document, which also carries the capture's name.

See docs/export.md for the columns and the DuckDB and Spark one-liners.`,
		Example: `  cmpd-dissect export --format parquet -o ds/ host1.pcapng host2.pcapng
  duckdb -c "SELECT capture, state, count(*) FROM read_parquet('ds/connections/*/*.parquet', hive_partitioning=true) GROUP BY ALL"
  cmpd-dissect export --format ndjson -o es/ cap.pcap && curl -s -H 'Content-Type: application/x-ndjson' --data-binary @es/findings/capture=cap.pcap/part-0.ndjson localhost:9200/_bulk`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := export.ParseFormat(format)
			if err != nil {
				return usageErr("export: --format: %v", err)
			}
			if dir == "" {
				return usageErr("export: give the output directory with -o DIR")
			}
			if flags.input.write != "" {
				return usageErr("export: -w is not supported (write the capture with the packet view)")
			}
			if groupRows < 0 {
				return usageErr("export: --row-group-rows must be positive, not %d", groupRows)
			}
			if _, err := flags.config(); err != nil {
				return err
			}
			names := append(append([]string(nil), flags.input.reads...), args...)
			if flags.input.iface != "" {
				if len(names) > 0 {
					return usageErr("give either -i IFACE or capture files, not both")
				}
				names = []string{flags.input.iface}
			}
			if len(names) == 0 {
				return usageErr("no input: give CAPTURE… (or -r FILE), or -i IFACE (see --help)")
			}
			seen := map[string]string{}
			for _, n := range names {
				cn := export.CaptureName(n)
				if prev, ok := seen[cn]; ok {
					return usageErr("export: %s and %s would both be capture=%s: rename one", prev, n, cn)
				}
				seen[cn] = n
			}
			opts := export.Options{Format: f, Dir: dir, Packets: packets, RowGroupRows: groupRows,
				IndexPrefix: indexPrefix, CreatedBy: readBuildInfo().Version}
			for _, n := range names {
				if err := exportCapture(cmd, &flags, opts, n); err != nil {
					return err
				}
			}
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&format, "format", "parquet", "output `FORMAT`: parquet or ndjson")
	fs.StringVarP(&dir, "output", "o", "", "write the dataset under `DIR` (created if missing)")
	fs.BoolVar(&packets, "packets", false, "also write the packets table (one row per frame)")
	fs.StringVar(&indexPrefix, "index-prefix", "cmpd-dissect-", "ndjson: the Elasticsearch index of each table is `PREFIX`TABLE")
	fs.IntVar(&groupRows, "row-group-rows", export.DefaultRowGroupRows, "parquet: rows per row group")
	cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions([]string{"parquet", "ndjson"}, cobra.ShellCompDirectiveNoFileComp))
	cmd.MarkFlagDirname("output")
	flags.register(cmd)
	return cmd
}

// exportCapture reads one capture (a file, or the live interface) with its
// own dissector and tracker, as "conns CAPTURE" and "-T json -r CAPTURE"
// would, and writes its tables.
func exportCapture(cmd *cobra.Command, flags *trackFlags, opts export.Options, name string) error {
	cfg, err := flags.config()
	if err != nil {
		return err
	}
	in := flags.input
	in.reads = nil
	var files []string
	if in.iface == "" {
		files = []string{name}
	}
	in.queuePairs = true
	it, err := in.open(cmd, files)
	if err != nil {
		return err
	}
	capName := export.CaptureName(name)
	c, err := export.NewCapture(opts, capName)
	if err != nil {
		it.close()
		return usageErr("export: %v", err)
	}
	t := conn.New(cfg)
	c.HandOff(t, it.transport)
	runErr := it.each(in.dissector(), func(rec *dissect.Record) (bool, error) {
		t.Record(rec)
		return false, c.Record(rec, t)
	})
	if err := it.close(); err != nil && runErr == nil {
		runErr = err
	}
	if runErr != nil {
		c.Abort()
		return runErr
	}
	t.Finish()
	t.AttachTransport(it.transport)
	if err := c.Finish(t); err != nil {
		return err
	}
	rows := c.Rows()
	fmt.Fprintf(cmd.ErrOrStderr(), "export: %s: %d connections, %d queue pairs, %d findings, %d rpc", capName,
		rows[export.TableConnections], rows[export.TableQueuePairs], rows[export.TableFindings], rows[export.TableRPC])
	if n, ok := rows[export.TablePackets]; ok {
		fmt.Fprintf(cmd.ErrOrStderr(), ", %d packets", n)
	}
	fmt.Fprintln(cmd.ErrOrStderr())
	return nil
}
