"""What a fabric costs and which configurations of each kind match a host count.

The model follows the FatPaths paper (SC'20, Section VII-A2 and Figure 10) and the Slim Fly
paper it cites (SC'14): routers priced by radix, cables by type and length, copper for short
links and fiber (with an optical transceiver at each end) for long ones, over a physical
layout of switches in racks and racks in rows; totals normalised per endpoint. The port and
cable counts per endpoint are the figures of Kathareios et al. (SC'15).
"""
