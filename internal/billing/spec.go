// Package billing reads the providers' billing exports: FOCUS 1.2 cost and usage datasets
// (CSV or Parquet, gzip allowed) as AWS Data Exports, Azure Cost Management exports and Google
// Cloud's FOCUS view write them, and reconciles the billed charges with Bursar's estimates. The
// FOCUS column table here is written once, from the specification, and serves both the parser of
// imports and the conformance test of Bursar's own export.
package billing

// Version is the FOCUS version this package follows: the one AWS, Azure and Google Cloud export.
const Version = "1.2"

// Type is a FOCUS column's data type.
type Type int

// The FOCUS data types (specification, "Data types"). DateTime values are ISO 8601 in UTC;
// JSON holds a key-value object (Tags, SkuPriceDetails).
const (
	String Type = iota
	Decimal
	DateTime
	JSON
)

func (t Type) String() string {
	return [...]string{"String", "Decimal", "DateTime", "JSON"}[t]
}

// Level is how strongly the specification asks for a column.
type Level int

// The feature levels of FOCUS columns.
const (
	// Mandatory columns are in every dataset.
	Mandatory Level = iota
	// Conditional columns are required when the provider supports what they describe
	// (commitment discounts, resources, regions...).
	Conditional
	// Recommended columns should be present.
	Recommended
)

// Column is one FOCUS column as the specification defines it.
type Column struct {
	Name  string
	Type  Type
	Level Level
	// Nullable says whether a present column may be empty in a row (before the conditional rules
	// of Check).
	Nullable bool
	// Allowed, when not empty, lists the only values a non-null cell may hold.
	Allowed []string
}

// The allowed values the specification lists.
var (
	chargeCategories  = []string{"Usage", "Purchase", "Tax", "Credit", "Adjustment"}
	chargeClasses     = []string{"Correction"}
	chargeFrequencies = []string{"One-Time", "Recurring", "Usage-Based"}
	pricingCategories = []string{"Standard", "Dynamic", "Committed", "Other"}
	commitCategories  = []string{"Spend", "Usage"}
	commitStatuses    = []string{"Used", "Unused"}
	capacityStatuses  = []string{"Used", "Unused"}
	serviceCategories = []string{"AI and Machine Learning", "Analytics", "Business Applications", "Compute", "Databases", "Developer Tools", "Multicloud", "Identity", "Integration", "Internet of Things", "Management and Governance", "Media", "Migration", "Mobile", "Networking", "Security", "Storage", "Web", "Other"}
)

// Columns are the FOCUS 1.2 columns of a cost and usage dataset, written from the specification's
// column definitions. Provider columns (x_ prefix) are not listed: parsers pass over them.
var Columns = []Column{
	{Name: "AvailabilityZone", Type: String, Level: Recommended, Nullable: true},
	{Name: "BilledCost", Type: Decimal, Level: Mandatory},
	{Name: "BillingAccountId", Type: String, Level: Mandatory},
	{Name: "BillingAccountName", Type: String, Level: Mandatory, Nullable: true},
	{Name: "BillingAccountType", Type: String, Level: Conditional, Nullable: true},
	{Name: "BillingCurrency", Type: String, Level: Mandatory},
	{Name: "BillingPeriodEnd", Type: DateTime, Level: Mandatory},
	{Name: "BillingPeriodStart", Type: DateTime, Level: Mandatory},
	{Name: "CapacityReservationId", Type: String, Level: Conditional, Nullable: true},
	{Name: "CapacityReservationStatus", Type: String, Level: Conditional, Nullable: true, Allowed: capacityStatuses},
	{Name: "ChargeCategory", Type: String, Level: Mandatory, Allowed: chargeCategories},
	{Name: "ChargeClass", Type: String, Level: Mandatory, Nullable: true, Allowed: chargeClasses},
	{Name: "ChargeDescription", Type: String, Level: Mandatory, Nullable: true},
	{Name: "ChargeFrequency", Type: String, Level: Recommended, Allowed: chargeFrequencies},
	{Name: "ChargePeriodEnd", Type: DateTime, Level: Mandatory},
	{Name: "ChargePeriodStart", Type: DateTime, Level: Mandatory},
	{Name: "CommitmentDiscountCategory", Type: String, Level: Conditional, Nullable: true, Allowed: commitCategories},
	{Name: "CommitmentDiscountId", Type: String, Level: Conditional, Nullable: true},
	{Name: "CommitmentDiscountName", Type: String, Level: Conditional, Nullable: true},
	{Name: "CommitmentDiscountQuantity", Type: Decimal, Level: Conditional, Nullable: true},
	{Name: "CommitmentDiscountStatus", Type: String, Level: Conditional, Nullable: true, Allowed: commitStatuses},
	{Name: "CommitmentDiscountType", Type: String, Level: Conditional, Nullable: true},
	{Name: "CommitmentDiscountUnit", Type: String, Level: Conditional, Nullable: true},
	{Name: "ConsumedQuantity", Type: Decimal, Level: Conditional, Nullable: true},
	{Name: "ConsumedUnit", Type: String, Level: Conditional, Nullable: true},
	{Name: "ContractedCost", Type: Decimal, Level: Mandatory},
	{Name: "ContractedUnitPrice", Type: Decimal, Level: Conditional, Nullable: true},
	{Name: "EffectiveCost", Type: Decimal, Level: Mandatory},
	{Name: "InvoiceId", Type: String, Level: Recommended, Nullable: true},
	{Name: "InvoiceIssuerName", Type: String, Level: Mandatory},
	{Name: "ListCost", Type: Decimal, Level: Mandatory},
	{Name: "ListUnitPrice", Type: Decimal, Level: Conditional, Nullable: true},
	{Name: "PricingCategory", Type: String, Level: Conditional, Nullable: true, Allowed: pricingCategories},
	{Name: "PricingCurrency", Type: String, Level: Conditional, Nullable: true},
	{Name: "PricingQuantity", Type: Decimal, Level: Mandatory, Nullable: true},
	{Name: "PricingUnit", Type: String, Level: Mandatory, Nullable: true},
	{Name: "ProviderName", Type: String, Level: Mandatory},
	{Name: "PublisherName", Type: String, Level: Mandatory},
	{Name: "RegionId", Type: String, Level: Conditional, Nullable: true},
	{Name: "RegionName", Type: String, Level: Conditional, Nullable: true},
	{Name: "ResourceId", Type: String, Level: Conditional, Nullable: true},
	{Name: "ResourceName", Type: String, Level: Conditional, Nullable: true},
	{Name: "ResourceType", Type: String, Level: Conditional, Nullable: true},
	{Name: "ServiceCategory", Type: String, Level: Mandatory, Allowed: serviceCategories},
	{Name: "ServiceName", Type: String, Level: Mandatory},
	{Name: "ServiceSubcategory", Type: String, Level: Recommended, Nullable: true},
	{Name: "SkuId", Type: String, Level: Conditional, Nullable: true},
	{Name: "SkuMeter", Type: String, Level: Conditional, Nullable: true},
	{Name: "SkuPriceDetails", Type: JSON, Level: Conditional, Nullable: true},
	{Name: "SkuPriceId", Type: String, Level: Conditional, Nullable: true},
	{Name: "SubAccountId", Type: String, Level: Conditional, Nullable: true},
	{Name: "SubAccountName", Type: String, Level: Conditional, Nullable: true},
	{Name: "SubAccountType", Type: String, Level: Conditional, Nullable: true},
	{Name: "Tags", Type: JSON, Level: Conditional, Nullable: true},
}

// columnIndex finds a column of the table by name.
var columnIndex = func() map[string]Column {
	m := make(map[string]Column, len(Columns))
	for _, c := range Columns {
		m[c.Name] = c
	}
	return m
}()

// Lookup returns the specification's column of that name.
func Lookup(name string) (Column, bool) {
	c, ok := columnIndex[name]
	return c, ok
}

// MandatoryColumns lists the names of the columns every dataset holds, in the table's order.
func MandatoryColumns() []string {
	var out []string
	for _, c := range Columns {
		if c.Level == Mandatory {
			out = append(out, c.Name)
		}
	}
	return out
}
