package pricesource

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/pricing"
	"github.com/aws/smithy-go"

	"github.com/bursar-dev/bursar/internal/backoff"
	bpricing "github.com/bursar-dev/bursar/internal/pricing"
)

// AWSOptions configures the AWS SDK clients. Credentials come from the SDK's default chain
// (environment, shared config files, instance role) unless given; never from flags.
type AWSOptions struct {
	Region      string
	Endpoint    string                  // BaseEndpoint override, for tests and VPC endpoints
	Credentials aws.CredentialsProvider // nil: the default chain
	HTTP        *http.Client
	Limits      Limits // per request: header and idle timeouts, body cap
}

// awsMaxPages bounds paging where no cycle shows: a provider minting new tokens forever.
const awsMaxPages = 1000

// awsWhere is the endpoint a source calls, for errors: the override, or the public one.
func awsWhere(endpoint, public string) string {
	if endpoint == "" {
		endpoint = public
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return public
	}
	return redactURL(u)
}

// awsConfig builds an SDK config whose retryer never retries: the collector owns retries, so
// that a 429's Retry-After and the source's schedule are honoured in one place.
func awsConfig(ctx context.Context, o AWSOptions, region string) (aws.Config, error) {
	opts := []func(*config.LoadOptions) error{
		config.WithRegion(region),
		config.WithRetryer(func() aws.Retryer { return aws.NopRetryer{} }),
	}
	if o.Credentials != nil {
		opts = append(opts, config.WithCredentialsProvider(o.Credentials))
	}
	if o.HTTP != nil {
		opts = append(opts, config.WithHTTPClient(o.HTTP))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("loading aws config: %w", err)
	}
	return cfg, nil
}

func endpointOption(endpoint string) *string {
	if endpoint == "" {
		return nil
	}
	return aws.String(endpoint)
}

// awsError classifies an SDK error. The SDK's messages carry the operation, status, request id
// and the service's error code, never the credentials.
func awsError(source, where string, err error) error {
	e := &Error{Source: source, Where: where, Kind: KindNetwork, Err: err}
	if kind, ok := transportKind(err); ok {
		e.Kind = kind
		return e
	}
	var re *awshttp.ResponseError
	if errors.As(err, &re) && re.Response != nil {
		e.Status = re.HTTPStatusCode()
		e.Kind = statusKind(e.Status)
		e.RetryAfter = backoff.RetryAfter(re.Response.Header)
	}
	var api smithy.APIError
	if errors.As(err, &api) {
		switch api.ErrorCode() {
		case "RequestLimitExceeded", "Throttling", "ThrottlingException", "TooManyRequestsException":
			e.Kind = KindRateLimited
		case "UnauthorizedOperation", "AuthFailure", "AccessDeniedException", "AccessDenied",
			"UnrecognizedClientException", "InvalidClientTokenId", "SignatureDoesNotMatch", "ExpiredToken":
			e.Kind = KindAuth
		}
	}
	var de *smithy.DeserializationError
	if errors.As(err, &de) && e.Kind != KindAuth && e.Kind != KindRateLimited {
		e.Kind = KindDecode
	}
	return e
}

func statusKind(status int) Kind {
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return KindAuth
	case status == http.StatusTooManyRequests:
		return KindRateLimited
	case status >= 500:
		return KindServer
	case status >= 400:
		return KindClient
	}
	return KindDecode
}

// AWSSpot reads current spot prices for one region from EC2 DescribeSpotPriceHistory.
type AWSSpot struct {
	Region        string
	InstanceTypes []string // defaults to every GPU type pricing knows
	Client        ec2.DescribeSpotPriceHistoryAPIClient
	where         string // the endpoint, for errors
}

// NewAWSSpot builds the source with an EC2 client for the region.
func NewAWSSpot(ctx context.Context, o AWSOptions, instanceTypes []string) (*AWSSpot, error) {
	cfg, err := awsConfig(ctx, o, o.Region)
	if err != nil {
		return nil, err
	}
	c := ec2.NewFromConfig(cfg, func(opt *ec2.Options) {
		opt.BaseEndpoint = endpointOption(o.Endpoint)
		opt.APIOptions = append(opt.APIOptions, addXMLRootCheck)
		opt.HTTPClient = guardedClient{http: opt.HTTPClient, limits: o.Limits}
	})
	where := awsWhere(o.Endpoint, "https://ec2."+o.Region+".amazonaws.com/")
	return &AWSSpot{Region: o.Region, InstanceTypes: instanceTypes, Client: c, where: where}, nil
}

// Name identifies the source in metrics and events.
func (s *AWSSpot) Name() string { return "aws-spot:" + s.Region }

// Fetch asks for the Linux spot price in effect at `at` for every type and zone, walking every
// page (EC2 ends with an empty, not absent, nextToken; the SDK's paginator stops on both). A
// nextToken already followed fails the fetch as a cycle.
func (s *AWSSpot) Fetch(ctx context.Context, at time.Time) (bpricing.Catalog, error) {
	types := s.InstanceTypes
	if len(types) == 0 {
		types = bpricing.AWSInstanceTypes()
	}
	in := &ec2.DescribeSpotPriceHistoryInput{
		ProductDescriptions: []string{"Linux/UNIX"},
		StartTime:           aws.Time(at),
		MaxResults:          aws.Int32(1000),
	}
	for _, t := range types {
		in.InstanceTypes = append(in.InstanceTypes, ec2types(t))
	}
	var rows []spotRow
	var pages pageTokens
	p := ec2.NewDescribeSpotPriceHistoryPaginator(s.Client, in)
	for n := 1; p.HasMorePages(); n++ {
		out, err := p.NextPage(ctx)
		if err != nil {
			return bpricing.Catalog{}, fmt.Errorf("reading aws spot prices page %d: %w", n, awsError(s.Name(), s.where, err))
		}
		rows = append(rows, spotRows(out)...)
		if err := pages.follow(n, aws.ToString(out.NextToken)); err != nil {
			return bpricing.Catalog{}, &Error{Source: s.Name(), Where: s.where, Kind: KindAPI, Err: err}
		}
	}
	var cat bpricing.Catalog
	if err := normalizeSpot(rows, s.Region, s.Name(), at, &cat); err != nil {
		return bpricing.Catalog{}, &Error{Source: s.Name(), Kind: KindInvalid, Err: err}
	}
	cat.Sort()
	return cat, nil
}

// AWSOnDemand reads on-demand Linux prices of GPU instances for one region from the Price List
// GetProducts API (whose endpoint lives in us-east-1 whatever the region asked about).
type AWSOnDemand struct {
	Region string
	Client pricing.GetProductsAPIClient
	where  string // the endpoint, for errors
}

// NewAWSOnDemand builds the source with a Price List client.
func NewAWSOnDemand(ctx context.Context, o AWSOptions) (*AWSOnDemand, error) {
	cfg, err := awsConfig(ctx, o, "us-east-1")
	if err != nil {
		return nil, err
	}
	c := pricing.NewFromConfig(cfg, func(opt *pricing.Options) {
		opt.BaseEndpoint = endpointOption(o.Endpoint)
		opt.HTTPClient = guardedClient{http: opt.HTTPClient, limits: o.Limits}
	})
	where := awsWhere(o.Endpoint, "https://api.pricing.us-east-1.amazonaws.com/")
	return &AWSOnDemand{Region: o.Region, Client: c, where: where}, nil
}

// Name identifies the source in metrics and events.
func (s *AWSOnDemand) Name() string { return "aws-ondemand:" + s.Region }

// Fetch queries GPU instances of the region, shared tenancy, Linux, no licence, OnDemand market
// (without that filter p5 also returns a $0.00 CapacityBlock product). Each page is decoded as
// it streams; a NextToken already followed fails the fetch as a cycle.
func (s *AWSOnDemand) Fetch(ctx context.Context, at time.Time) (bpricing.Catalog, error) {
	in := &pricing.GetProductsInput{
		ServiceCode:   aws.String("AmazonEC2"),
		FormatVersion: aws.String("aws_v1"),
		MaxResults:    aws.Int32(100),
		Filters:       productFilters(s.Region),
	}
	var cat bpricing.Catalog
	var pages pageTokens
	p := pricing.NewGetProductsPaginator(s.Client, in)
	for n := 1; p.HasMorePages(); n++ {
		var docErr error
		out, err := p.NextPage(ctx, streamPriceList(func(i int, doc string) error {
			docErr = s.product(n, i, doc, at, &cat)
			return docErr
		}))
		if docErr != nil {
			return bpricing.Catalog{}, docErr
		}
		if err != nil {
			return bpricing.Catalog{}, fmt.Errorf("reading aws price list page %d: %w", n, awsError(s.Name(), s.where, err))
		}
		if err := pages.follow(n, aws.ToString(out.NextToken)); err != nil {
			return bpricing.Catalog{}, &Error{Source: s.Name(), Where: s.where, Kind: KindAPI, Err: err}
		}
	}
	cat.Sort()
	return cat, nil
}

// product decodes and normalizes PriceList[i] of page n into cat.
func (s *AWSOnDemand) product(n, i int, doc string, at time.Time, cat *bpricing.Catalog) error {
	prod, err := parseAWSProduct([]byte(doc))
	if err != nil {
		return &Error{Source: s.Name(), Where: s.where, Kind: KindDecode, Err: fmt.Errorf("page %d, PriceList[%d]: %w", n, i, err)}
	}
	if err := normalizeProduct(prod, s.Region, s.Name(), at, cat); err != nil {
		return &Error{Source: s.Name(), Where: s.where, Kind: KindInvalid, Err: fmt.Errorf("page %d, PriceList[%d]: %w", n, i, err)}
	}
	return nil
}

// pageTokens remembers the tokens a paging loop followed, to tell a cycle and an endless
// stream of pages from a long answer.
type pageTokens map[string]int

// follow records that page n handed out token next ("" on the last page).
func (t *pageTokens) follow(n int, next string) error {
	if next == "" {
		return nil
	}
	if *t == nil {
		*t = pageTokens{}
	}
	if first, ok := (*t)[next]; ok {
		return fmt.Errorf("%w: page %d's next token %q was already followed after page %d", ErrPageCycle, n, short(next), first)
	}
	if n >= awsMaxPages {
		return fmt.Errorf("more than %d pages; stopping", awsMaxPages)
	}
	(*t)[next] = n
	return nil
}
