package billing

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Record is one row of a FOCUS dataset: cells by column name, an empty string for null.
type Record map[string]string

// RowError says which file, row and column of an export is wrong, and how.
type RowError struct {
	File string
	// Row is the data row, 1 for the first after the header; 0 means the header (with a
	// Column) or the whole file (without).
	Row    int
	Column string
	Err    error
}

func (e *RowError) Error() string {
	where := fmt.Sprintf("row %d", e.Row)
	switch {
	case e.Row == 0 && e.Column == "": // the whole file
		return fmt.Sprintf("%s: %v", e.File, e.Err)
	case e.Row == 0:
		where = "header"
	case e.Column == "":
		return fmt.Sprintf("%s: %s: %v", e.File, where, e.Err)
	}
	return fmt.Sprintf("%s: %s, column %s: %v", e.File, where, e.Column, e.Err)
}

func (e *RowError) Unwrap() error { return e.Err }

// CheckHeader checks that a dataset's columns hold every mandatory one, once each.
func CheckHeader(cols []string) (string, error) {
	seen := map[string]bool{}
	for _, c := range cols {
		if seen[c] {
			return c, errors.New("appears twice")
		}
		seen[c] = true
	}
	for _, m := range MandatoryColumns() {
		if !seen[m] {
			return m, errors.New("is missing: FOCUS makes it mandatory; export the dataset with every FOCUS column")
		}
	}
	return "", nil
}

// Check checks a record: each FOCUS cell against the column table, then the specification's
// rules between columns. It returns the column at fault with the error. Provider columns
// (x_...) and columns the table does not know are not checked.
func Check(r Record) (string, error) {
	for _, c := range Columns {
		v, ok := r[c.Name]
		if !ok {
			continue
		}
		if err := CheckCell(c, v); err != nil {
			return c.Name, err
		}
	}
	return checkRules(r)
}

// checkRules are the conditions the specification puts between columns.
func checkRules(r Record) (string, error) {
	for _, p := range [][2]string{{"BillingPeriodStart", "BillingPeriodEnd"}, {"ChargePeriodStart", "ChargePeriodEnd"}} {
		a, _ := parseTime(r[p[0]])
		b, _ := parseTime(r[p[1]])
		if !b.After(a) {
			return p[1], fmt.Errorf("%s is not after %s %s", r[p[1]], p[0], r[p[0]])
		}
	}
	cat, priced := r["ChargeCategory"], r["ChargeClass"] != "Correction"
	if priced && (cat == "Usage" || cat == "Purchase") {
		for _, c := range []string{"PricingQuantity", "PricingUnit"} {
			if r[c] == "" {
				return c, fmt.Errorf("is empty on a %s charge; FOCUS requires it unless ChargeClass is Correction", cat)
			}
		}
	}
	if r["CommitmentDiscountId"] != "" {
		for _, c := range []string{"CommitmentDiscountCategory", "CommitmentDiscountType"} {
			if v, ok := r[c]; ok && v == "" {
				return c, errors.New("is empty on a row with a CommitmentDiscountId")
			}
		}
		if v, ok := r["CommitmentDiscountStatus"]; ok && v == "" && cat == "Usage" {
			return "CommitmentDiscountStatus", errors.New("is empty on a Usage row with a CommitmentDiscountId")
		}
		if v, ok := r["PricingCategory"]; ok && v != "Committed" && cat == "Usage" {
			return "PricingCategory", fmt.Errorf("is %q on a Usage row with a CommitmentDiscountId; want Committed", v)
		}
	} else if r["CommitmentDiscountStatus"] != "" {
		return "CommitmentDiscountStatus", errors.New("is set on a row without a CommitmentDiscountId")
	} else if r["PricingCategory"] == "Committed" && cat == "Usage" {
		return "CommitmentDiscountId", errors.New("is empty (or missing) on a Usage row priced Committed; FOCUS asks for the commitment that priced it")
	}
	return "", nil
}

// Charge is one billed charge, the part of a FOCUS row reconciliation uses.
type Charge struct {
	Provider         string // ProviderName as written
	BillingAccountID string
	SubAccountID     string
	Currency         string
	PeriodStart      time.Time // BillingPeriodStart
	PeriodEnd        time.Time
	Start, End       time.Time // ChargePeriodStart, ChargePeriodEnd
	Category         string    // ChargeCategory
	Class            string    // ChargeClass
	PricingCategory  string
	Billed           float64 // BilledCost
	Effective        float64 // EffectiveCost
	Contracted       float64 // ContractedCost
	List             float64 // ListCost
	CommitmentID     string
	CommitmentStatus string
	Region, Zone     string
	ResourceID       string
	SkuID            string
	SkuPriceID       string
	// InstanceType is the machine type the charge is for, where the provider's columns say it
	// (SkuPriceDetails or the provider's own x_ columns; see InstanceType).
	InstanceType string
	Quantity     float64 // PricingQuantity
	Unit         string  // PricingUnit
	Tags         map[string]string
	// File is the export file the charge was read from, for errors about it.
	File string
}

// charge reads a checked record.
func charge(r Record) Charge {
	t := func(c string) time.Time { v, _ := parseTime(r[c]); return v }
	f := func(c string) float64 { v, _ := parseDecimal(r[c]); return v }
	tags, _ := parseObject(r["Tags"])
	return Charge{
		Provider: r["ProviderName"], BillingAccountID: r["BillingAccountId"], SubAccountID: r["SubAccountId"],
		Currency: r["BillingCurrency"], PeriodStart: t("BillingPeriodStart"), PeriodEnd: t("BillingPeriodEnd"),
		Start: t("ChargePeriodStart"), End: t("ChargePeriodEnd"), Category: r["ChargeCategory"], Class: r["ChargeClass"],
		PricingCategory: r["PricingCategory"], Billed: f("BilledCost"), Effective: f("EffectiveCost"),
		Contracted: f("ContractedCost"), List: f("ListCost"), CommitmentID: r["CommitmentDiscountId"],
		CommitmentStatus: r["CommitmentDiscountStatus"], Region: r["RegionId"], Zone: r["AvailabilityZone"],
		ResourceID: r["ResourceId"], SkuID: r["SkuId"], SkuPriceID: r["SkuPriceId"], InstanceType: InstanceType(r),
		Quantity: f("PricingQuantity"), Unit: r["PricingUnit"], Tags: tags,
	}
}

// ProviderKey is Bursar's name for a FOCUS ProviderName: the provider names bursar.yaml uses.
func ProviderKey(name string) string {
	n := strings.ToLower(strings.TrimSpace(name))
	switch {
	case n == "aws" || strings.Contains(n, "amazon"):
		return "aws"
	case n == "azure" || strings.Contains(n, "microsoft"):
		return "azure"
	case n == "gcp" || strings.Contains(n, "google"):
		return "gcp"
	case strings.Contains(n, "oracle") || n == "oci":
		return "oci"
	}
	return strings.Join(strings.Fields(n), "-")
}

// instanceTypeKeys are the SkuPriceDetails properties that name a charge's machine type.
var instanceTypeKeys = []string{"InstanceType", "x_InstanceType", "VMSize", "MachineType"}

// InstanceType is the machine type a FOCUS row is for, or "" when its columns do not say: a
// SkuPriceDetails property, else the x_InstanceType column, else the part after the colon of
// AWS's x_UsageType ("USE1-SpotUsage:p4d.24xlarge"). Other provider columns are not read.
func InstanceType(r Record) string {
	if d, err := parseObject(r["SkuPriceDetails"]); err == nil {
		for _, k := range instanceTypeKeys {
			if v := d[k]; v != "" {
				return v
			}
		}
	}
	if v := r["x_InstanceType"]; v != "" {
		return v
	}
	if u := r["x_UsageType"]; strings.Contains(u, ":") { // AWS: region-prefix usage type, then the instance type
		return u[strings.LastIndex(u, ":")+1:]
	}
	return ""
}
