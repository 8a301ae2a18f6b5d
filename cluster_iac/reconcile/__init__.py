"""The cluster as delivered against its design: what a site discovers (ibnetdiscover today)
compared with the plan by switch, port, rack unit and cable label."""
