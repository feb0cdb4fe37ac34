"""AWS::IAM::User and AWS::IAM::AccessKey: Keystone stack users and their EC2 keypairs
(Heat's ``engine/resources/aws/iam``), found by ``resources/aws``'s scan."""
