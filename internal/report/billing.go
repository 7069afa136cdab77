package report

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/bursar-dev/bursar/internal/billing"
	"github.com/bursar-dev/bursar/internal/store"
)

// Writer is the store an import writes to: *store.Store is one. Reads go through Table (in a
// cluster, the Distributed table over every shard); inserts go to the local table of the
// database, as the recorder's do.
type Writer interface {
	Querier
	Database() string
	Engine() store.Engine
}

// localTable is the quoted name of a table of w's database on the server w is connected to.
func localTable(w Writer, name string) string {
	q := func(id string) string {
		return "`" + strings.ReplaceAll(strings.ReplaceAll(id, `\`, `\\`), "`", "\\`") + "`"
	}
	return q(w.Database()) + "." + q(name)
}

// Imported is what one export (one provider, billing account and period) of an import did.
type Imported struct {
	Provider, Account string
	Period            time.Time
	ExportID          string
	Files             []string
	Charges           int
	// Skipped is set when the same export was imported before: nothing changed.
	Skipped bool
}

// slice is the charges of one provider, billing account and billing period in an import.
type slice struct {
	provider, account string
	period            time.Time
	digests, files    []string
	charges           []billing.Charge
	chargeFiles       []string // each charge's file
}

// ImportBilling loads parsed exports into the store. The files of one import that hold one
// provider's billing account and period are one export, identified by a digest of their contents:
// an export imported before is skipped (importing the same files twice changes nothing), and a
// new one is written, then registered, and replaces the older export of that period for every
// reader. now is the import's time, the tie-break between exports covering the same days.
func ImportBilling(ctx context.Context, w Writer, exports []*billing.Export, now time.Time) ([]Imported, error) {
	var out []Imported
	for _, s := range slicesOf(exports) {
		id := s.id()
		imp := Imported{Provider: s.provider, Account: s.account, Period: s.period, ExportID: id, Files: s.files, Charges: len(s.charges)}
		known, err := exportKnown(ctx, w, s, id)
		if err != nil {
			return out, err
		}
		if imp.Skipped = known; !known {
			if err := writeSlice(ctx, w, s, id, now); err != nil {
				return out, err
			}
		}
		out = append(out, imp)
	}
	return out, nil
}

// slicesOf groups the charges of all files by provider, billing account and period.
func slicesOf(exports []*billing.Export) []*slice {
	m := map[string]*slice{}
	for _, e := range exports {
		for _, c := range e.Charges {
			p := billing.ProviderKey(c.Provider)
			k := p + "\x00" + c.BillingAccountID + "\x00" + c.PeriodStart.Format(time.RFC3339)
			s := m[k]
			if s == nil {
				s = &slice{provider: p, account: c.BillingAccountID, period: c.PeriodStart}
				m[k] = s
			}
			if len(s.files) == 0 || s.files[len(s.files)-1] != e.File {
				s.files, s.digests = append(s.files, e.File), append(s.digests, e.Digest)
			}
			s.charges, s.chargeFiles = append(s.charges, c), append(s.chargeFiles, e.File)
		}
	}
	out := make([]*slice, 0, len(m))
	for _, s := range m {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		return a.provider+a.account+a.period.Format(time.RFC3339) < b.provider+b.account+b.period.Format(time.RFC3339)
	})
	return out
}

// id digests the slice's key and its files' contents (not their names or order).
func (s *slice) id() string {
	d := append([]string{}, s.digests...)
	sort.Strings(d)
	sum := sha256.Sum256([]byte(s.provider + "\x00" + s.account + "\x00" + s.period.Format(time.RFC3339) + "\x00" + strings.Join(d, ",")))
	return hex.EncodeToString(sum[:16])
}

func exportKnown(ctx context.Context, q Querier, s *slice, id string) (bool, error) {
	rows, err := queryRows[struct{ N int64 }](ctx, q, fmt.Sprintf(`SELECT count() AS N FROM %s
		WHERE provider = %s AND billing_account_id = %s AND period_start = %s AND export_id = %s`,
		q.Table("billing_export"), lit(s.provider), lit(s.account), ms64(s.period), lit(id)))
	if err != nil {
		return false, fmt.Errorf("looking for billing export %s: %w", id, err)
	}
	return len(rows) > 0 && rows[0].N > 0, nil
}

func chTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05.000") }

// chargeRow is a billing_charge row as JSONEachRow.
type chargeRow struct {
	ExportID         string  `json:"export_id"`
	Provider         string  `json:"provider"`
	Account          string  `json:"billing_account_id"`
	PeriodStart      string  `json:"period_start"`
	Row              int     `json:"row"`
	File             string  `json:"file"`
	ProviderName     string  `json:"provider_name"`
	SubAccount       string  `json:"sub_account_id"`
	Currency         string  `json:"currency"`
	PeriodEnd        string  `json:"period_end"`
	ChargeStart      string  `json:"charge_start"`
	ChargeEnd        string  `json:"charge_end"`
	Category         string  `json:"category"`
	Class            string  `json:"class"`
	PricingCategory  string  `json:"pricing_category"`
	Billed           float64 `json:"billed_cost"`
	Effective        float64 `json:"effective_cost"`
	Contracted       float64 `json:"contracted_cost"`
	List             float64 `json:"list_cost"`
	CommitmentID     string  `json:"commitment_id"`
	CommitmentStatus string  `json:"commitment_status"`
	Region           string  `json:"region"`
	Zone             string  `json:"zone"`
	ResourceID       string  `json:"resource_id"`
	SkuID            string  `json:"sku_id"`
	SkuPriceID       string  `json:"sku_price_id"`
	InstanceType     string  `json:"instance_type"`
	Quantity         float64 `json:"quantity"`
	Unit             string  `json:"unit"`
	Tags             string  `json:"tags"`
}

// writeSlice inserts the slice's charges (deduplicated by export and chunk, so a retry of a
// failed import writes nothing twice), then registers the export, which makes them visible.
func writeSlice(ctx context.Context, w Writer, s *slice, id string, now time.Time) error {
	const chunk = 50000
	var covered time.Time
	for i := 0; i < len(s.charges); i += chunk {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		for j := i; j < min(i+chunk, len(s.charges)); j++ {
			c := s.charges[j]
			if c.End.After(covered) {
				covered = c.End
			}
			if err := enc.Encode(toChargeRow(id, c, j, s.chargeFiles[j])); err != nil {
				return fmt.Errorf("encoding billing charges: %w", err)
			}
		}
		query := fmt.Sprintf("INSERT INTO %s SETTINGS insert_deduplicate = 1, insert_deduplication_token = %s FORMAT JSONEachRow",
			localTable(w, "billing_charge"), lit(fmt.Sprintf("billing/%s/%d", id, i)))
		if err := w.Engine().Exec(ctx, query, b.Bytes()); err != nil {
			return fmt.Errorf("writing billing charges of %s: %w", strings.Join(s.files, ", "), err)
		}
	}
	reg, _ := json.Marshal(map[string]any{"provider": s.provider, "billing_account_id": s.account,
		"period_start": chTime(s.period), "export_id": id, "files": s.files, "charges": len(s.charges),
		"covered_until": chTime(covered), "imported_at": chTime(now)})
	query := fmt.Sprintf("INSERT INTO %s SETTINGS insert_deduplicate = 1, insert_deduplication_token = %s FORMAT JSONEachRow",
		localTable(w, "billing_export"), lit("billing-export/"+id))
	if err := w.Engine().Exec(ctx, query, append(reg, '\n')); err != nil {
		return fmt.Errorf("registering billing export %s: %w", id, err)
	}
	return nil
}

// toChargeRow is charge c, the seq'th of its export, as a row.
func toChargeRow(id string, c billing.Charge, seq int, file string) chargeRow {
	tags := ""
	if len(c.Tags) > 0 {
		b, _ := json.Marshal(c.Tags)
		tags = string(b)
	}
	return chargeRow{ExportID: id, Provider: billing.ProviderKey(c.Provider), Account: c.BillingAccountID,
		PeriodStart: chTime(c.PeriodStart), Row: seq, File: file, ProviderName: c.Provider, SubAccount: c.SubAccountID,
		Currency: c.Currency, PeriodEnd: chTime(c.PeriodEnd), ChargeStart: chTime(c.Start), ChargeEnd: chTime(c.End),
		Category: c.Category, Class: c.Class, PricingCategory: c.PricingCategory, Billed: c.Billed, Effective: c.Effective,
		Contracted: c.Contracted, List: c.List, CommitmentID: c.CommitmentID, CommitmentStatus: c.CommitmentStatus,
		Region: c.Region, Zone: c.Zone, ResourceID: c.ResourceID, SkuID: c.SkuID, SkuPriceID: c.SkuPriceID,
		InstanceType: c.InstanceType, Quantity: c.Quantity, Unit: c.Unit, Tags: tags}
}

// loadCharges reads the billed charges whose charge period overlaps the window, from the latest
// export of each provider, account and period only.
func loadCharges(ctx context.Context, q Querier, w Window) ([]billing.Charge, error) {
	rows, err := queryRows[chargeRow](ctx, q, fmt.Sprintf(`SELECT * FROM %s FINAL
		WHERE (provider, billing_account_id, period_start, export_id) IN (
			SELECT provider, billing_account_id, period_start, argMax(export_id, (covered_until, imported_at))
			FROM %s GROUP BY provider, billing_account_id, period_start)
		AND charge_end > %s AND charge_start < %s
		ORDER BY provider, billing_account_id, period_start, row`,
		q.Table("billing_charge"), q.Table("billing_export"), ms64(w.Since), ms64(w.Until)))
	if err != nil {
		return nil, fmt.Errorf("reading billed charges: %w", err)
	}
	out := make([]billing.Charge, len(rows))
	for i, r := range rows {
		out[i] = r.charge()
	}
	return out, nil
}

func (r chargeRow) charge() billing.Charge {
	t := func(s string) time.Time { v, _ := time.Parse("2006-01-02 15:04:05.999", s); return v.UTC() }
	var tags map[string]string
	if r.Tags != "" {
		_ = json.Unmarshal([]byte(r.Tags), &tags)
	}
	return billing.Charge{Provider: r.ProviderName, BillingAccountID: r.Account, SubAccountID: r.SubAccount,
		Currency: r.Currency, PeriodStart: t(r.PeriodStart), PeriodEnd: t(r.PeriodEnd), Start: t(r.ChargeStart),
		End: t(r.ChargeEnd), Category: r.Category, Class: r.Class, PricingCategory: r.PricingCategory,
		Billed: r.Billed, Effective: r.Effective, Contracted: r.Contracted, List: r.List, CommitmentID: r.CommitmentID,
		CommitmentStatus: r.CommitmentStatus, Region: r.Region, Zone: r.Zone, ResourceID: r.ResourceID, SkuID: r.SkuID,
		SkuPriceID: r.SkuPriceID, InstanceType: r.InstanceType, Quantity: r.Quantity, Unit: r.Unit, Tags: tags, File: r.File}
}

// ImportFiles reads every export file under paths (ReadExports) and imports them as
// ImportBilling does. Every file is parsed and checked first: when one is malformed, nothing from
// any of them is imported.
func ImportFiles(ctx context.Context, w Writer, paths []string, now time.Time) ([]Imported, error) {
	exports, err := ReadExports(paths)
	if err != nil {
		return nil, err
	}
	return ImportBilling(ctx, w, exports, now)
}

// ReadExports reads and checks every export file under paths (files or directories); the first
// malformed one is an error that names it, its row and column, and says nothing was imported.
func ReadExports(paths []string) ([]*billing.Export, error) {
	var exports []*billing.Export
	for _, p := range paths {
		files, err := billing.Files(p)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			e, err := billing.ReadFile(f)
			if err != nil {
				return nil, fmt.Errorf("%w\nnothing was imported: fix the file or export it again, then import again", err)
			}
			exports = append(exports, e)
		}
	}
	return exports, nil
}
