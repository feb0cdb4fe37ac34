"""AWS::ElasticLoadBalancing::LoadBalancer: an HAProxy instance in a nested stack
(Heat's ``engine/resources/aws/lb``), found by ``resources/aws``'s scan."""
