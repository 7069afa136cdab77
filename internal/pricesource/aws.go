package pricesource

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/pricing"
	"github.com/aws/smithy-go"

	bpricing "github.com/bursar-dev/bursar/internal/pricing"
)

// AWSOptions configures the AWS SDK clients. Credentials come from the SDK's default chain
// (environment, shared config files, instance role) unless given; never from flags.
type AWSOptions struct {
	Region      string
	Endpoint    string                  // BaseEndpoint override, for tests and VPC endpoints
	Credentials aws.CredentialsProvider // nil: the default chain
	HTTP        *http.Client
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
func awsError(source string, err error) error {
	e := &Error{Source: source, Kind: KindNetwork, Err: err}
	var re *awshttp.ResponseError
	if errors.As(err, &re) && re.Response != nil {
		e.Status = re.HTTPStatusCode()
		e.Kind = statusKind(e.Status)
		e.RetryAfter = retryAfter(re.Response.Header)
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
}

// NewAWSSpot builds the source with an EC2 client for the region.
func NewAWSSpot(ctx context.Context, o AWSOptions, instanceTypes []string) (*AWSSpot, error) {
	cfg, err := awsConfig(ctx, o, o.Region)
	if err != nil {
		return nil, err
	}
	c := ec2.NewFromConfig(cfg, func(opt *ec2.Options) { opt.BaseEndpoint = endpointOption(o.Endpoint) })
	return &AWSSpot{Region: o.Region, InstanceTypes: instanceTypes, Client: c}, nil
}

// Name identifies the source in metrics and events.
func (s *AWSSpot) Name() string { return "aws-spot:" + s.Region }

// Fetch asks for the Linux spot price in effect at `at` for every type and zone, walking every
// page (EC2 ends with an empty, not absent, nextToken; the SDK's paginator stops on both).
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
	p := ec2.NewDescribeSpotPriceHistoryPaginator(s.Client, in)
	for n := 1; p.HasMorePages(); n++ {
		out, err := p.NextPage(ctx)
		if err != nil {
			return bpricing.Catalog{}, fmt.Errorf("reading aws spot prices page %d: %w", n, awsError(s.Name(), err))
		}
		rows = append(rows, spotRows(out)...)
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
}

// NewAWSOnDemand builds the source with a Price List client.
func NewAWSOnDemand(ctx context.Context, o AWSOptions) (*AWSOnDemand, error) {
	cfg, err := awsConfig(ctx, o, "us-east-1")
	if err != nil {
		return nil, err
	}
	c := pricing.NewFromConfig(cfg, func(opt *pricing.Options) { opt.BaseEndpoint = endpointOption(o.Endpoint) })
	return &AWSOnDemand{Region: o.Region, Client: c}, nil
}

// Name identifies the source in metrics and events.
func (s *AWSOnDemand) Name() string { return "aws-ondemand:" + s.Region }

// Fetch queries GPU instances of the region, shared tenancy, Linux, no licence, OnDemand market
// (without that filter p5 also returns a $0.00 CapacityBlock product).
func (s *AWSOnDemand) Fetch(ctx context.Context, at time.Time) (bpricing.Catalog, error) {
	in := &pricing.GetProductsInput{
		ServiceCode:   aws.String("AmazonEC2"),
		FormatVersion: aws.String("aws_v1"),
		MaxResults:    aws.Int32(100),
		Filters:       productFilters(s.Region),
	}
	var cat bpricing.Catalog
	p := pricing.NewGetProductsPaginator(s.Client, in)
	for n := 1; p.HasMorePages(); n++ {
		out, err := p.NextPage(ctx)
		if err != nil {
			return bpricing.Catalog{}, fmt.Errorf("reading aws price list page %d: %w", n, awsError(s.Name(), err))
		}
		for i, doc := range out.PriceList {
			prod, err := parseAWSProduct([]byte(doc))
			if err != nil {
				return bpricing.Catalog{}, &Error{Source: s.Name(), Kind: KindDecode,
					Err: fmt.Errorf("page %d, PriceList[%d]: %w", n, i, err)}
			}
			if err := normalizeProduct(prod, s.Region, s.Name(), at, &cat); err != nil {
				return bpricing.Catalog{}, &Error{Source: s.Name(), Kind: KindInvalid,
					Err: fmt.Errorf("page %d, PriceList[%d]: %w", n, i, err)}
			}
		}
	}
	cat.Sort()
	return cat, nil
}
