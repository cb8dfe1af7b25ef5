apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: l40s
spec:
  role: ${node_role}
  amiSelectorTerms:
    - alias: al2023@latest
  subnetSelectorTerms:
    - tags:
        karpenter.sh/discovery: ${cluster_name}
  blockDeviceMappings:
    - deviceName: /dev/xvda
      ebs:
        volumeSize: 300Gi
        volumeType: gp3
