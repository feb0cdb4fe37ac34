"""AWS::EC2::* types (Heat's ``aws/ec2``): instances, security groups, elastic IPs,
volumes and the VPC family, on Nova, Neutron and Cinder."""
